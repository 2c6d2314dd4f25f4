# The image of the Docker sandbox backend's per-job containers (RLVR_SANDBOX=docker).
# Python is the worker's minor version (3.11): job frames are `marshal` data. The only
# toolchains are the ones the `code` verifier's languages need: g++ (C++) and node
# (JavaScript). The `proof` verifier (coq) and `compile` for Rust (rustc) need theirs
# added; without them those items are masked as "not installed in the sandbox":
#   docker build -f docker/sandbox.Dockerfile -t rlvr-sandbox:latest .
#   docker build -f docker/sandbox.Dockerfile --build-arg TOOLCHAINS="g++ nodejs coq rustc" -t rlvr-sandbox:latest .
ARG BASE=python:3.11-slim-bookworm
FROM ${BASE}
ARG TOOLCHAINS="g++ nodejs"

RUN apt-get update \
 && apt-get install -y --no-install-recommends ${TOOLCHAINS} \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin sandbox

# Only the runner and what it imports (standard library only): no pip, no wheels.
COPY src/rlvr/__init__.py src/rlvr/errors.py src/rlvr/version.py /opt/rlvr/rlvr/
COPY src/rlvr/sandboxes/__init__.py src/rlvr/sandboxes/base.py /opt/rlvr/rlvr/sandboxes/
COPY src/rlvr/sandboxes/runner/ /opt/rlvr/rlvr/sandboxes/runner/
# The local backend's seccomp filters are applied inside too (rlvr.sandboxes.docker.inside).
COPY src/rlvr/sandboxes/local/ /opt/rlvr/rlvr/sandboxes/local/
COPY src/rlvr/sandboxes/docker/__init__.py src/rlvr/sandboxes/docker/protocol.py src/rlvr/sandboxes/docker/inside.py /opt/rlvr/rlvr/sandboxes/docker/
RUN python3 -I -S -m compileall -q /opt/rlvr

# The host runs containers with this uid too (and a read-only root, no capabilities).
USER 10001:10001
WORKDIR /tmp
LABEL org.rlvr.sandbox.protocol="1"
# pid 1 takes one job on stdin and exits: see rlvr.sandboxes.docker.inside.
ENTRYPOINT ["python3", "-I", "-S", "-B", "-c", "import sys; sys.path.insert(0, '/opt/rlvr'); from rlvr.sandboxes.docker.inside import main; sys.exit(main())"]
