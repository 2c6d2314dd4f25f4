#!/bin/sh
# Entrypoint of the service image: runs `rlvr "$@"`.
#
# As root (how docker-compose.yml runs the containers that sandbox programs), it first
# hands the local sandbox the container's own cgroups, which it needs to account memory
# and processes per job (isolation `full`): Docker mounts them read-only, so they are
# made writable (only this container's subtree is mounted: no other container's, and not
# the hierarchy's root with its release_agent), and a cgroup namespace of its own makes
# /proc/self/cgroup name them from that subtree's root. Where this cannot be done (no
# CAP_SYS_ADMIN) the sandbox reports a lower isolation and says why in /readyz.
set -e
if [ "$(id -u)" = 0 ]; then
  for dir in /sys/fs/cgroup /sys/fs/cgroup/memory /sys/fs/cgroup/pids; do
    if mountpoint -q "$dir"; then mount -o remount,bind,rw "$dir" 2>/dev/null || true; fi
  done
  if unshare --cgroup true 2>/dev/null; then
    exec unshare --cgroup rlvr "$@"
  fi
fi
exec rlvr "$@"
