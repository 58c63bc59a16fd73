# agones-py's component images: one build, one target per image the chart names
# (charts/agones: agones-controller, agones-extensions, agones-allocator, agones-ping, agones-sdk).
#
#   docker build --target controller -t agones-py/agones-controller:1.57.0-py .
#   (likewise extensions, allocator, ping, sdk)
#
# Each image runs `agones <sub-command>` as UID/GID 1000 with nothing written under / : the code is
# installed read-only into /opt/agones, Python writes no bytecode, and the only writable place a
# component needs is /tmp, which the chart mounts as an emptyDir (readOnlyRootFilesystem: true).
# No image is built on the development machines (no Docker engine there); see docs/images.md.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /build
COPY pyproject.toml setup.py README.md ./
COPY src ./src
RUN python -m venv /opt/agones \
    && /opt/agones/bin/pip install . \
    && /opt/agones/bin/python -m compileall -q /opt/agones

FROM ${PYTHON_IMAGE} AS base
COPY --from=build /opt/agones /opt/agones
RUN groupadd --gid 1000 agones \
    && useradd --uid 1000 --gid 1000 --no-create-home --home-dir /home/agones --shell /usr/sbin/nologin agones
ENV PATH=/opt/agones/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp
USER 1000:1000
ENTRYPOINT ["agones"]

FROM base AS controller
CMD ["controller"]

FROM base AS extensions
EXPOSE 8081 8080
CMD ["extensions"]

FROM base AS allocator
EXPOSE 8443 8080
CMD ["allocator"]

FROM base AS ping
EXPOSE 8080/tcp 8080/udp
CMD ["ping"]

# The controller gives the sidecar only flags (`--grpc-port=...`) as args: the sub-command is fixed.
FROM base AS sdk
EXPOSE 9357 9358 8080
ENTRYPOINT ["agones", "sdkserver"]
CMD []
