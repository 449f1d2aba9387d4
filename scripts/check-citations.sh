#!/usr/bin/env bash
# The repository stands alone: code, comments and documents cite its own
# docs/ (product-rules.md, envoy-facts.md, architecture.md), never a document
# kept elsewhere. This check fails, naming file:line, when a citation of an
# outside document comes back: the team's former briefing files (SPEC,
# DESIGN.md, STYLE.md, ENVOY-NOTES), its seed documents ("seed 003",
# seeds/000_…), numbered issues of another tracker ("issue 7", "(#7)",
# "PR #21"), or a path on one machine (/work/…, ../shared/…).
#
# Not flagged: words that merely contain the letters ("specification",
# UNSPECIFIED), third-party issue links (presidio#1493, github.com/…/issues/N),
# the fuzz seed directories (fuzz/seeds/…), and this project's own labels
# (rule V5, SECURITY.md F8-1).
#
# Scanned: every file git tracks or would track (untracked, not ignored),
# except fuzz inputs, lock files, recorded test fixtures (their README.md
# files are scanned) and this script, which spells the patterns.
#
# usage: scripts/check-citations.sh   (exit 0 clean, 1 citations found)
set -euo pipefail
cd "$(dirname "$0")/.."

# label<TAB>extended regex. Case-sensitive unless the label ends in "/i".
patterns=(
  $'briefing file\t\\bSPEC\\b|ENVOY-NOTES|\\b(DESIGN|STYLE)\\.md\\b'
  $'seed document/i\t\\bseeds?[-_ ]?0[0-9]{2}\\b|(^|[^a-z_/])seeds/[0-9]{3}_'
  $'issue number/i\t(^|[^a-z0-9_./-])issues? ?#?[0-9]+|\\(#[0-9]+\\)|\\bPR ?#[0-9]+'
  $'machine path\t/work/|\\.\\./shared/'
)
# Lines holding a link to a public tracker are never an outside citation.
public_link='github\.com/|gitlab\.com/'

# flagged REGEX FLAGS: stdin lines → the lines the pattern flags.
flagged() {
  local regex=$1 flags=$2
  grep -E $flags -- "$regex" | grep -vE -- "$public_link" || true
}

# The patterns' intent, checked before every run: a pattern that stops
# flagging what it must (or starts flagging the words it must not) fails.
self_test() {
  local must=(
    "cites SPEC V5 here"
    "(SPEC F5–F7, V4–V6)"
    "see ENVOY-NOTES.md"
    "../shared/ENVOY-NOTES.md"
    "DESIGN.md, \"Caches\""
    "STYLE.md says"
    "seed 003 says"
    "the seed-000 archive_uid residual"
    "/work/shared/seeds/003_8a465844f2d08e70.txt"
    "seeds/000_cd0bcce64da43476.txt"
    "## Targets (issue 7)"
    "(fuzz/, issue 8)"
    "Issue #12 asked for it"
    "continues the (#7) arc"
    "after PR #21 merges"
    "export CARGO_TARGET_DIR=/work/main/target-host"
  )
  local mustnot=(
    "the OpenAI specification"
    "Ipv4Addr::UNSPECIFIED"
    "see presidio#1493"
    "https://github.com/envoyproxy/envoy/issues/12345"
    "fuzz/seeds/mask_request/f8-1-overlap.txt"
    "\"corpus/\$target\" \"seeds/\$target\""
    "finding F8-1 (SECURITY.md)"
    "rule V5 (docs/product-rules.md#v5)"
    "V8 masking ≥ 300 MB/s"
    "spec: {}"
    "seed 42 of the generator"
    "no issues found"
  )
  local cases=("${must[@]}" "${mustnot[@]}") i line entry label regex flags hit bad=0
  for ((i = 0; i < ${#cases[@]}; i++)); do
    line=${cases[i]}
    hit=0
    for entry in "${patterns[@]}"; do
      label=${entry%%$'\t'*}
      regex=${entry#*$'\t'}
      flags=""
      [[ $label == */i ]] && flags="-i"
      [[ -n "$(printf '%s\n' "$line" | flagged "$regex" "$flags")" ]] && hit=1
    done
    if ((i < ${#must[@]})); then
      ((hit)) || { echo "check-citations self-test: not flagged: $line" >&2; bad=1; }
    else
      ((hit == 0)) || { echo "check-citations self-test: wrongly flagged: $line" >&2; bad=1; }
    fi
  done
  return "$bad"
}

self_test

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -d '' files < <(git ls-files -z --cached --others --exclude-standard)
else
  mapfile -d '' files < <(find . -path ./target -prune -o -path ./.git -prune -o -type f -print0 | sed -z 's|^\./||')
fi

scan=()
for f in "${files[@]}"; do
  case "$f" in
    scripts/check-citations.sh) continue ;;
    fuzz/seeds/* | fuzz/corpus/* | fuzz/artifacts/*) continue ;;
    *.lock | *.proptest-regressions) continue ;;
    */fixtures/*.md) ;;
    */fixtures/*) continue ;;
    target/* | target-*/* | envoy/.venv/* | .venv/* | .latet/*) continue ;;
  esac
  [[ -f "$f" ]] && scan+=("$f")
done

found=0
for entry in "${patterns[@]}"; do
  label=${entry%%$'\t'*}
  regex=${entry#*$'\t'}
  flags=""
  [[ $label == */i ]] && flags="-i"
  while IFS= read -r hit; do
    [[ -n "$hit" ]] || continue
    echo "${hit}" | cut -c1-240 | sed "s|^|outside citation (${label%/i}): |"
    found=$((found + 1))
  done < <(grep -nIH -E $flags -- "$regex" "${scan[@]}" | grep -vE -- "$public_link" || true)
done

if ((found)); then
  echo "check-citations: $found outside citation(s) in ${#scan[@]} files scanned." >&2
  echo "Cite docs/product-rules.md (rule V5: docs/product-rules.md#v5), docs/envoy-facts.md" >&2
  echo "or docs/architecture.md instead, or say the requirement in plain words." >&2
  exit 1
fi
echo "check-citations: no outside citation in ${#scan[@]} files"
