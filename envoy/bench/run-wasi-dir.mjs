// Runs a wasm32-wasip1 command module in node's V8 with one directory
// opened as /data: `node run-wasi-dir.mjs DIR MODULE.wasm [args...]`
// (plugin/examples/vault_memory.rs reads a snapshot from it).
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import { argv, env, exit } from 'node:process';

const [, , dir, modulePath, ...args] = argv;
if (!dir || !modulePath) {
  console.error('usage: node run-wasi-dir.mjs DIR MODULE.wasm [args...]');
  exit(2);
}
const wasi = new WASI({ version: 'preview1', args: [modulePath, ...args], env, preopens: { '/data': dir }, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(modulePath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));
