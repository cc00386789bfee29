#!/bin/sh
# Installs ids-server into APP (the image's runtime stage runs it; so does
# packages/server/test/dockerfile.test.ts, without a container):
#   install-runtime.sh PACKED APP "STORES"
# PACKED holds the tarballs of `npm run pack`; APP holds runtime/package.json and its
# package-lock.json; STORES names the stores whose packages and clients go in, any of
#   pglite postgres mysql redis etcd zookeeper   (none: host claims, --machine-id, private IP)
# Third-party packages come from the lockfile only: `npm ci` installs its locked versions, then
# the @ids tarballs go in offline, so one that needed anything the lock lacks fails the build
# instead of resolving a newer version from the registry.
set -eu
packed=$1
app=$2
stores=$3

# @ids/server and the @ids packages it depends on (the test checks this list against the
# package.json files).
tarballs='server engine inspector machine-file machine-ip snowflake sonyflake'
clients=''
for store in $stores; do
  case $store in
    pglite) tarballs="$tarballs segment" clients="$clients @electric-sql/pglite" ;;
    postgres) tarballs="$tarballs segment" clients="$clients pg" ;;
    mysql) tarballs="$tarballs segment" clients="$clients mysql2" ;;
    # Segments in Redis, the redis machine-ID source, tokens and Idempotency-Key (@ids/lock).
    redis) tarballs="$tarballs segment machine-redis machine-lease lock" clients="$clients ioredis" ;;
    etcd) tarballs="$tarballs machine-etcd machine-lease" clients="$clients etcd3" ;;
    zookeeper) tarballs="$tarballs machine-zookeeper machine-lease" clients="$clients node-zookeeper-client" ;;
    *)
      echo "STORES: unknown store \"$store\"; expected any of: pglite postgres mysql redis etcd zookeeper" >&2
      exit 2
      ;;
  esac
done

cd "$app"
# The clients of stores not chosen leave package.json, so npm ci leaves them out of the image.
for client in @electric-sql/pglite pg mysql2 ioredis etcd3 node-zookeeper-client; do
  case " $clients " in
    *" $client "*) ;;
    *) npm pkg delete "optionalDependencies.$client" ;;
  esac
done
flags='--omit=dev --ignore-scripts --no-audit --no-fund --no-update-notifier --loglevel=error'
# shellcheck disable=SC2086
npm ci $flags
files=''
for name in $(printf '%s\n' $tarballs | sort -u); do
  # The digit after the name keeps machine-lease from matching machine-lease-something.
  files="$files $(ls "$packed"/ids-"$name"-[0-9]*.tgz)"
done
# Offline: every third-party package is already installed from the lock. Peers are not resolved:
# the server's stores are optional peers, and the ones chosen above are installed explicitly.
# shellcheck disable=SC2086
npm install --no-save --offline --legacy-peer-deps $flags $files
