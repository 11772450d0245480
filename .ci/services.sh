#!/usr/bin/env bash
# Start the real services the test suite uses, on loopback, if they are not running yet:
# dockerd, Redis and PostgreSQL (with a role `envduels` that may create databases).
set -euo pipefail

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local seconds=$1 what=$2; shift 2
  for _ in $(seq 1 "$seconds"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  echo "services: $what did not come up in ${seconds}s" >&2
  return 1
}

if ! docker info >/dev/null 2>&1; then
  echo "services: starting dockerd"
  nohup dockerd >/var/log/envduels-dockerd.log 2>&1 &
  wait_for 60 dockerd docker info
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "services: starting redis-server"
  redis-server --bind 127.0.0.1 --port 6379 --save '' --appendonly no --daemonize yes \
    --logfile /var/log/envduels-redis.log
  wait_for 20 redis redis-cli -h 127.0.0.1 -p 6379 ping
fi

PG_VERSION=$(ls /usr/lib/postgresql | sort -n | tail -1)
if ! pg_lsclusters --no-header | grep -q online; then
  echo "services: starting PostgreSQL $PG_VERSION"
  if ! pg_lsclusters --no-header | grep -q "^$PG_VERSION"; then
    pg_createcluster "$PG_VERSION" main
  fi
  pg_ctlcluster "$PG_VERSION" main start
fi
wait_for 30 postgresql su postgres -c "psql -Atqc 'select 1'"
su postgres -c "psql -v ON_ERROR_STOP=1 -qc \"DO \\\$\\\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'envduels') THEN
    CREATE ROLE envduels LOGIN PASSWORD 'envduels' CREATEDB;
  END IF; END \\\$\\\$;\""
echo "services: dockerd, redis and postgresql are up"
