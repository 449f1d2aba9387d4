// Runs a wasm32-wasip1 command module in node's V8 through node's `wasi`
// module: `node run-wasi.mjs MODULE.wasm [args...]`. The environment is
// passed through (LATET_BENCH_MS, LATET_BENCH_VAULTS); no directory is opened.
// Run it as `node --no-liftoff` to compile as Envoy's V8 does (TurboFan only).
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import { argv, env, exit } from 'node:process';

const [, , modulePath, ...args] = argv;
if (!modulePath) {
  console.error('usage: node run-wasi.mjs MODULE.wasm [args...]');
  exit(2);
}
const wasi = new WASI({ version: 'preview1', args: [modulePath, ...args], env, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(modulePath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));
