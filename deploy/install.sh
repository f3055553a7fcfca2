#!/bin/sh
# Installs nohit into PREFIX as it runs in production: the binary, the resource bundles beside it
# (the web app, the clubs by season, GRDB's), and Data/ (the shipped deal rules and the bundled
# 2020 season, with Retrosheet's notice), which nohit reads from its working directory: run it
# with PREFIX as the working directory (the container recipe and the systemd unit in
# docs/operating.md do).
#
#   deploy/install.sh [--from BUILD_DIR] PREFIX
#
# BUILD_DIR is where `swift build` put the products (default: .build/release; build it first with
# `swift build -c release --product nohit`).
set -eu
from=.build/release
if [ "${1:-}" = "--from" ]; then
    from=${2:?--from needs a build directory}
    shift 2
fi
prefix=${1:?usage: deploy/install.sh [--from BUILD_DIR] PREFIX}
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
# The default build folder is the repository's; one given is read from where this is run.
if [ "$from" = .build/release ]; then from=$root/.build/release; fi
if [ ! -x "$from/nohit" ]; then
    echo "install.sh: no nohit in $from: build it first (swift build -c release --product nohit)" >&2
    exit 1
fi
mkdir -p -- "$prefix"
prefix=$(CDPATH= cd -- "$prefix" && pwd)
from=$(CDPATH= cd -- "$from" && pwd)
if [ "$prefix" = "$root" ] || [ "$prefix" = "$from" ]; then
    echo "install.sh: $prefix is the repository or the build folder: install somewhere else" >&2
    exit 1
fi
# Beside a running copy: the new binary is put in place by a rename, not written over it.
cp "$from/nohit" "$prefix/.nohit.new"
mv -f "$prefix/.nohit.new" "$prefix/nohit"
count=0
for bundle in "$from"/*.resources; do
    [ -d "$bundle" ] || continue
    rm -rf "$prefix/$(basename "$bundle")"
    cp -R "$bundle" "$prefix/"
    count=$((count + 1))
done
if [ "$count" -eq 0 ]; then
    echo "install.sh: no resource bundles (*.resources) in $from" >&2
    exit 1
fi
rm -rf "$prefix/Data"
cp -R "$root/Data" "$prefix/Data"
echo "installed nohit, $count resource bundles and Data/ in $prefix (run it there: cd $prefix && ./nohit serve --date 2020-08-25, the demo)"
