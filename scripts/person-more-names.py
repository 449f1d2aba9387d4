#!/usr/bin/env python3
"""Writes core/data/person/world/more_{given,surnames}.bin: given names and
surnames from Faker's person providers (MIT licence; the PyPI package
`faker`, pinned below), for the locales of people living in the six
languages' countries, minus every word the project's own lists already
hold. Run: python3 -m venv /tmp/fk && /tmp/fk/bin/pip install faker==40.54.0
&& /tmp/fk/bin/python scripts/person-more-names.py

Format (read by core/src/detect/person/lexicon.rs), `more_*.bin`: folded
words (lower case, no diacritics; only a-z, ' and -), sorted,
front-coded and packed five bits per symbol, most significant bit first:
per word, how many leading chars it shares with the word before (0-31),
then the rest of the word (a-z as 1-26, ' as 27, - as 28), then 0.
core/build.rs packs the project's own lists (folded at build time) the
same way, with symbols 29-31 for what else they hold; one reader reads
both."""
import glob, importlib, os, re, unicodedata

LOCALES = ("en_US en_GB en_IE en_IN en_NG en_PK es_ES es_MX es_AR es_CO es_CL "
           "it_IT de_DE de_AT de_CH fr_FR fr_CH fr_QC fr_DZ pt_PT pt_BR pl_PL "
           "tr_TR ro_RO vi_VN yo_NG ig_NG ha_NG tw_GH").split()
MIN_LEN = 3
ROOT = os.path.join(os.path.dirname(__file__), "..", "core", "data", "person")
SPECIAL = {"ß": "ss", "’": "'", "æ": "ae", "œ": "oe", "ł": "l", "ı": "i", "đ": "d", "ø": "o"}


def fold(word):
    word = "".join(SPECIAL.get(c, SPECIAL.get(c.lower(), c)) for c in word)
    word = unicodedata.normalize("NFD", word)
    return "".join(c for c in word if not unicodedata.combining(c)).lower()


def attr(provider, name):
    for klass in provider.__mro__:
        if name in klass.__dict__:
            value = klass.__dict__[name]
            if isinstance(value, property):
                return []
            return list(value.keys()) if isinstance(value, dict) else list(value)
    return []


SYMBOLS = "abcdefghijklmnopqrstuvwxyz'-"


def packed(words):
    symbols, prev = [], ""
    for word in words:
        k = 0
        while k < min(len(word), len(prev), 31) and word[k] == prev[k]:
            k += 1
        symbols.append(k)
        symbols.extend(SYMBOLS.index(c) + 1 for c in word[k:])
        symbols.append(0)
        prev = word
    bits = "".join(format(s, "05b") for s in symbols)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8))


known = set()
for path in glob.glob(os.path.join(ROOT, "*", "*.txt")):
    if "more_" in path:
        continue
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line and not line.startswith("#"):
            known.update(fold(p) for p in re.split(r"[\s-]", line))
given, surnames = set(), set()
for locale in LOCALES:
    provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
    for kind, out in (("first_names", given), ("last_names", surnames)):
        for suffix in ("", "_male", "_female"):
            for name in attr(provider, kind + suffix):
                for part in re.split(r"[\s-]", name):
                    folded = fold(part)
                    if len(folded) >= MIN_LEN and all(c in SYMBOLS for c in folded):
                        out.add(folded)
for name, words in (("more_given", given), ("more_surnames", surnames)):
    words = sorted(words - known)
    with open(os.path.join(ROOT, "world", name + ".bin"), "wb") as f:
        f.write(packed(words))
    print(name, len(words))
