#!/usr/bin/env bash
# Fetch the LLaMA-2 tokenizer for a machine with no model hub: install the
# pinned npm package llama-tokenizer-js (it carries the LLaMA-1/2 vocabulary
# and merges) into third_party/ (git-ignored), build
# third_party/llama2-tokenizer.json (Hugging Face BPE layout) from it, and
# check both against pinned SHA-256 sums. Idempotent: does nothing when the
# file is already there with the pinned sum. Provenance: docs/tokenizer.md.
#
# Without node/npm or without network it prints a warning and exits 0 (the
# build does not need the tokenizer; tests that do are skipped with a reason).
# A checksum mismatch is an error (exit 1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/third_party"
out="$dest/llama2-tokenizer.json"

PKG_VERSION=1.2.2
PKG_JS_SHA256=34a7b9f7579d40486444590c37cba6564ef40c3dd98ecdfc2f7c886ae72c898d
JSON_SHA256=921dbba9ca8ff6ea4de922bf2f36273f53e02b90d33cd2358cd5aa87a4f2e7c7

sum() { sha256sum "$1" | cut -d' ' -f1; }

if [[ -f "$out" && "$(sum "$out")" == "$JSON_SHA256" ]]; then
  echo "fetch-tokenizer: $out present (sha256 $JSON_SHA256)"
  exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "fetch-tokenizer: warning: node and npm are needed (Debian packages nodejs, npm); no tokenizer built, tokenizer tests will be skipped" >&2
  exit 0
fi

pkg="$dest/node_modules/llama-tokenizer-js"
if [[ ! -f "$pkg/llama-tokenizer.js" ]] || ! grep -q "\"version\": \"$PKG_VERSION\"" "$pkg/package.json"; then
  mkdir -p "$dest"
  if ! npm install --prefix "$dest" --no-save --no-audit --no-fund --loglevel=error "llama-tokenizer-js@$PKG_VERSION" >&2; then
    echo "fetch-tokenizer: warning: npm install llama-tokenizer-js@$PKG_VERSION failed (no network?); no tokenizer built" >&2
    exit 0
  fi
fi
got="$(sum "$pkg/llama-tokenizer.js")"
if [[ "$got" != "$PKG_JS_SHA256" ]]; then
  echo "fetch-tokenizer: $pkg/llama-tokenizer.js has sha256 $got, expected $PKG_JS_SHA256 (package changed?)" >&2
  exit 1
fi

node "$root/scripts/fetch-tokenizer.mjs" "$pkg" > "$out.tmp"
got="$(sum "$out.tmp")"
if [[ "$got" != "$JSON_SHA256" ]]; then
  echo "fetch-tokenizer: built $out.tmp has sha256 $got, expected $JSON_SHA256" >&2
  exit 1
fi
mv "$out.tmp" "$out"
echo "fetch-tokenizer: built $out from llama-tokenizer-js@$PKG_VERSION (sha256 $JSON_SHA256)"
