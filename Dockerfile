# whichgpu as a service: the web app and REST API, and the price-refresh job (compose.yaml).
#
#   docker build -t whichgpu .
#   docker run --rm -p 127.0.0.1:8000:8000 whichgpu                  # SQLite in the container
#   docker run --rm -p 127.0.0.1:8000:8000 \
#       -e WHICHGPU_DATABASE_URL=postgresql://user:pass@db/whichgpu whichgpu   # shared store
#
# The builder stage turns whichgpu and every dependency into wheels; the final stage installs
# them with --no-index (no registry reached) and keeps no compiler, no pip cache and no source.
# At run time the app needs no network: the GPU catalog, model presets and a dated price
# snapshot ship in the package (HF_HUB_OFFLINE=1: Hub ids resolve from the shipped presets;
# unset it if the container may reach the Hugging Face Hub). Only 'whichgpu prices refresh'
# reaches out, to the price sources.
ARG PYTHON_IMAGE=python:3.12-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN python -m pip wheel --wheel-dir /wheels ".[postgres,prices,mcp]"

FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    WHICHGPU_HOME=/var/lib/whichgpu \
    WHICHGPU_ACCESS_LOG=1
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python -m pip install --no-index --no-cache-dir --find-links /wheels \
        "whichgpu[postgres,prices,mcp]" \
 && groupadd --system --gid 10001 whichgpu \
 && useradd --system --uid 10001 --gid whichgpu --home-dir /var/lib/whichgpu --create-home \
        --shell /usr/sbin/nologin whichgpu
USER 10001:10001
WORKDIR /var/lib/whichgpu
EXPOSE 8000
# Liveness: the process answers (/healthz never waits for the store; /readyz is for readiness).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
ENTRYPOINT ["whichgpu"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000", "--workers", "2"]
