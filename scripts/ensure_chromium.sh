#!/usr/bin/env bash
# Headless Chromium for the browser tests (tests/report): Debian's package, installed once when missing and this
# user may install packages. The tests fail (not skip) under `make test` when it is still missing.
set -u
for name in chromium chromium-browser google-chrome; do
  command -v "$name" >/dev/null 2>&1 && exit 0
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "gpucloud: installing Debian's chromium for the browser tests (once; takes a few minutes)..."
  if ! apt-get install -y -q chromium >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1
  fi
  command -v chromium >/dev/null 2>&1 && { echo "gpucloud: $(chromium --version 2>/dev/null)"; exit 0; }
fi
echo "gpucloud: headless Chromium is missing (apt-get install chromium); the browser tests will fail" >&2
exit 0
