# The image of the Docker sandbox backend's per-job containers (RLVR_SANDBOX=docker).
# Python is the worker's minor version (3.11): job frames are `marshal` data. The
# toolchains are the ones the `code` and `compile` verifiers' languages need: g++ (C and
# C++), node (JavaScript) and rustc (Rust). The `proof` verifier's coq is large and is
# added on request; without it proof items are masked as "not installed in the sandbox":
#   docker build -f docker/sandbox.Dockerfile -t rlvr-sandbox:latest .
#   docker build -f docker/sandbox.Dockerfile --build-arg TOOLCHAINS="g++ nodejs rustc coq" -t rlvr-sandbox:latest .
#
# Toolchains and node packages are Debian bookworm's, as in host mode on Debian 12 (what
# CI runs): the same versions, which /readyz reports (rlvr.sandboxes.jobenv).
#
# The job environment (rlvr.sandboxes.jobenv): the pinned Python packages of
# src/rlvr/sandboxes/job-requirements.txt in /opt/rlvr-jobs/python, and Debian's
# node-lodash in /usr/share/nodejs. The Python packages come from PyPI; where the build
# cannot reach it, from wheels downloaded on the host into build/job-wheels:
#   pip download --no-deps --only-binary=:all: -d build/job-wheels -r src/rlvr/sandboxes/job-requirements.txt
ARG BASE=python:3.11-slim-bookworm

# A stage of its own, so that the image has no pip.
FROM ${BASE} AS jobenv
# `job-wheel[s]`: the folder where it exists, nothing (and no error) where it does not.
COPY src/rlvr/sandboxes/job-requirements.txt build/job-wheel[s] /jobenv/
RUN python3 -m venv /opt/pip \
 && if ls /jobenv/*.whl >/dev/null 2>&1; then from="--no-index --find-links /jobenv"; else from=""; fi \
 && /opt/pip/bin/pip install --quiet --no-cache-dir --disable-pip-version-check --no-deps --only-binary=:all: \
      $from --target /opt/rlvr-jobs/python -r /jobenv/job-requirements.txt

FROM ${BASE}
ARG TOOLCHAINS="g++ nodejs rustc"
ARG NODE_PACKAGES="node-lodash"

RUN apt-get update \
 && apt-get install -y --no-install-recommends ${TOOLCHAINS} ${NODE_PACKAGES} \
 && rm -rf /var/lib/apt/lists/* \
 && rm -rf /mnt && ln -s tmp /mnt \
 && useradd --uid 10001 --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin sandbox
# Owned by root, like the rest of the image: jobs read it and cannot change it.
COPY --from=jobenv /opt/rlvr-jobs /opt/rlvr-jobs
# NODE_PATH for the record (Debian's node looks there anyway); one BLAS thread: see
# rlvr.sandboxes.jobenv.THREAD_CAPS.
ENV NODE_PATH=/usr/share/nodejs OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

# Only the runner and what it imports (standard library only): no pip, no wheels.
COPY src/rlvr/__init__.py src/rlvr/errors.py src/rlvr/version.py /opt/rlvr/rlvr/
COPY src/rlvr/sandboxes/__init__.py src/rlvr/sandboxes/base.py src/rlvr/sandboxes/jobenv.py src/rlvr/sandboxes/job-requirements.txt /opt/rlvr/rlvr/sandboxes/
COPY src/rlvr/sandboxes/runner/ /opt/rlvr/rlvr/sandboxes/runner/
# The local backend's seccomp filters are applied inside too (rlvr.sandboxes.docker.inside).
COPY src/rlvr/sandboxes/local/ /opt/rlvr/rlvr/sandboxes/local/
COPY src/rlvr/sandboxes/docker/__init__.py src/rlvr/sandboxes/docker/protocol.py src/rlvr/sandboxes/docker/inside.py /opt/rlvr/rlvr/sandboxes/docker/
RUN python3 -I -S -m compileall -q /opt/rlvr
# C++ jobs' precompiled standard headers, where g++ is installed (rlvr.sandboxes.runner.pch).
RUN if command -v g++ >/dev/null; then \
      python3 -I -S -c "import sys; sys.path.insert(0, '/opt/rlvr'); from rlvr.sandboxes.runner import pch; pch.build(pch.JOB_DIR)"; \
    fi

# The host starts containers as root with only CAP_SETUID, SETGID and SETPCAP (and a
# read-only root); pid 1 gives each job process its own uid and keeps no capability
# (rlvr.sandboxes.docker.inside). USER is for a plain `docker run`.
USER 10001:10001
WORKDIR /tmp
LABEL org.rlvr.sandbox.protocol="3"
# pid 1 takes one job on stdin and exits: see rlvr.sandboxes.docker.inside. Programs
# import from the job environment after the standard library.
ENTRYPOINT ["python3", "-I", "-S", "-B", "-c", "import sys; sys.path.insert(0, '/opt/rlvr'); sys.path.append('/opt/rlvr-jobs/python'); from rlvr.sandboxes.docker.inside import main; sys.exit(main())"]
