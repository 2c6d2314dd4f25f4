# One image for the api (`rlvr serve`) and the workers (`rlvr worker`), with the
# toolchains the `code` verifier runs: python3.11, g++ and node.
#
#   docker build -f docker/service.Dockerfile -t rlvr .
#
# The package and its dependencies come from PyPI, and so do the job environment's
# pinned packages (rlvr.sandboxes.jobenv: what programs may import, apart from the
# service's own, in /opt/rlvr-jobs/python). Where the build cannot reach PyPI, build the
# wheels on the host and name their folder (inside the build context); async-timeout is
# for a base older than 3.11.3, like the Debian stand-in's 3.11.2:
#   pip wheel -w build/docker-wheels '.[redis,docker]' 'async-timeout>=4.0.3'
#   pip download --no-deps --only-binary=:all: -d build/docker-wheels -r src/rlvr/sandboxes/job-requirements.txt
#   docker build -f docker/service.Dockerfile --build-arg WHEELS=build/docker-wheels -t rlvr .
#
# Toolchains and node packages are Debian bookworm's, as in the sandbox image and in host
# mode on Debian 12: the same versions, which /readyz reports.
#
# The default user is the unprivileged `rlvr`. The local sandbox needs root inside the
# container (namespaces, mounts, a uid per job slot), so the compose file runs the
# containers that sandbox programs as root with a short list of capabilities and its own
# seccomp profile (see docker-compose.yml), and docker/service-entrypoint.sh gives the
# sandbox the container's own cgroups.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS wheels
ARG WHEELS=
COPY . /src
RUN if [ -n "$WHEELS" ]; then \
        cp -r "/src/$WHEELS" /wheels; \
    else \
        python -m venv /opt/build && \
        /opt/build/bin/pip install --no-cache-dir --upgrade pip && \
        /opt/build/bin/pip wheel --no-cache-dir --wheel-dir /wheels "/src[redis,docker]" && \
        /opt/build/bin/pip download --no-cache-dir --no-deps --only-binary=:all: --dest /wheels \
            -r /src/src/rlvr/sandboxes/job-requirements.txt; \
    fi && \
    cp /src/src/rlvr/sandboxes/job-requirements.txt /wheels/

FROM ${PYTHON_IMAGE}
# Toolchains first: the slowest layer, which changes least.
RUN apt-get update && \
    apt-get install -y --no-install-recommends g++ nodejs rustc node-lodash && \
    rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --user-group --no-create-home --home-dir /nonexistent rlvr
COPY --from=wheels /wheels /tmp/wheels
RUN python -m venv /opt/rlvr && \
    /opt/rlvr/bin/pip install --no-cache-dir --no-index --find-links /tmp/wheels "rlvr[redis,docker]" && \
    /opt/rlvr/bin/pip install --no-cache-dir --no-index --find-links /tmp/wheels --no-deps \
        --target /opt/rlvr-jobs/python -r /tmp/wheels/job-requirements.txt && \
    /opt/rlvr/bin/python -m rlvr.sandboxes.runner.pch /opt/rlvr-jobs/pch && \
    rm -rf /tmp/wheels
COPY docker/service-entrypoint.sh /usr/local/bin/rlvr-entrypoint
ENV PATH=/opt/rlvr/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
WORKDIR /
USER rlvr
EXPOSE 8000
ENTRYPOINT ["rlvr-entrypoint"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
