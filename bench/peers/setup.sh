#!/usr/bin/env bash
# Installs the peer tools for `bench/throughput.ts` (promptfoo 0.120.0, the newest that runs on Node 20)
# into bench/peers/node_modules (gitignored; about 1.5 GB). Never part of what `npm ci` installs.
set -euo pipefail
cd "$(dirname "$0")"
PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 nice -n 10 npm install --no-audit --no-fund --ignore-scripts
# 0.120.0 looks for its migrations in node_modules/promptfoo/drizzle but ships them in dist/drizzle.
if [ ! -e node_modules/promptfoo/drizzle ]; then ln -s dist/drizzle node_modules/promptfoo/drizzle; fi
# Install scripts are skipped (they fetch binaries from hosts this network may not reach). promptfoo needs
# better-sqlite3's native module: reuse probate's own build when the versions match, else compile it.
bs=node_modules/better-sqlite3
if [ ! -f $bs/build/Release/better_sqlite3.node ]; then
  ours=../../node_modules/better-sqlite3
  if [ -f $ours/build/Release/better_sqlite3.node ] && \
     [ "$(node -p "require('./$bs/package.json').version")" = "$(node -p "require('$ours/package.json').version")" ]; then
    mkdir -p $bs/build/Release && cp $ours/build/Release/better_sqlite3.node $bs/build/Release/
  else
    nice -n 10 npm rebuild better-sqlite3
  fi
fi
echo "promptfoo $(node -p "require('./node_modules/promptfoo/package.json').version") installed in $(pwd)/node_modules"
