#!/usr/bin/env python3
"""Static resource checks of the compiled CUDA kernels (ctest label `static`).

Subcommands:
  wrap -- NVCC ARGS...   CUDA compiler launcher (tests/static_checks.cmake sets it on
                         attnbench_* libraries): compiles with `-Xptxas -v` and keeps ptxas's
                         per-kernel report next to the object as OBJ.ptxas.txt.
  report                 collects every OBJ.ptxas.txt under --build-dir into a JSON
                         report: per kernel and arch, registers, static shared memory,
                         stack frame and spill bytes (the JSON context's
                         `kernel_resources`, docs/json_schema.md).
  check                  report, then fail on any spill or on static shared memory
                         above the sm_90 limit (227 KB).
  check-sass             every kernel whose name matches --require-hmma (default:
                         names containing `flash2` or `ssd_kernel`, minus --hmma-exclude) must contain
                         tensor-core MMA instructions (HMMA, or HGMMA for wgmma) in its
                         SASS for every arch it was built for. Needs cuobjdump: from
                         the toolkit, $CUOBJDUMP, or PyPI's nvidia-cuda-cuobjdump
                         (scripts/requirements.txt), which installs it as
                         site-packages/nvidia/cu13/bin/cuobjdump; and nvdisasm,
                         which cuobjdump -sass runs (nvidia-cuda-nvdisasm, same
                         folder, or $NVDISASM).
  check-hopper           every kernel matching --require (default: `flash3`) built for sm_90a
                         must hold HGMMA (wgmma; QGMMA ...E4M3.E4M3 for the e4m3 kernels of
                         flash3_fp8), UTMALDG (TMA loads) and USETMAXREG in its
                         SASS, 0 spills, launch registers x threads <= 64K, and setmaxnreg
                         budgets (producer dec, consumer inc) that fit the 64K register file
                         for one producer and --consumer-wgs consumer warpgroups, and no
                         "wgmma ... serialized" (C7520) in ptxas's report.
                         --require-sm90a: fail when no such kernel was built for sm_90a.
  check-mufu             every kernel matching --require (default: `exp2_chains`, the exp
                         ceiling's kernel) must issue MUFU.EX2 (the multi-function unit's
                         exp2: what ex2.approx compiles to) in its SASS for every arch it was
                         built for, and no other MUFU function (the exp ceiling
                         measures the unit the attention kernels' exp2 runs on).

Dynamic shared memory is chosen at launch, so it is not in ptxas's report: the
rows' supports() check it against the same limit and the runners against the
device's opt-in limit.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path
from typing import Iterable

SMEM_LIMIT_SM90 = 227 * 1024  # bytes of shared memory per block on sm_90 (opt-in maximum)
REPORT_SUFFIX = ".ptxas.txt"
DEFAULT_HMMA_REGEX = r"flash2|ssd_kernel"
DEFAULT_HMMA_EXCLUDE = r"combine|reduce|zero|fill|init"

_RE_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
_RE_PROPS = re.compile(r"Function properties for (\S+)")
_RE_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_RE_USED = re.compile(r"Used (\d+) registers")
_RE_SMEM = re.compile(r"(\d+) bytes smem")


# ---- wrap ----------------------------------------------------------------------
def _is_ptxas_line(line: str) -> bool:
    return line.startswith("ptxas info") or bool(_RE_FRAME.search(line))


def cmd_wrap(argv: list[str]) -> int:
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print("kernel_resources.py wrap: no compiler command", file=sys.stderr)
        return 2
    obj = None
    for i, a in enumerate(argv[:-1]):
        if a == "-o":
            obj = argv[i + 1]
    cmd = list(argv)
    if obj is not None and "-Xptxas=-v" not in cmd and "--resource-usage" not in cmd:
        cmd += ["-Xptxas", "-v"]
    proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True, errors="replace")
    kept, passed = [], []
    for line in proc.stderr.splitlines(keepends=True):
        (kept if _is_ptxas_line(line) else passed).append(line)
    sys.stderr.write("".join(passed))
    if obj is not None:
        report = Path(obj + REPORT_SUFFIX)
        if proc.returncode == 0:
            report.write_text("".join(kept))
        elif report.exists():
            report.unlink()
    return proc.returncode


# ---- report --------------------------------------------------------------------
def parse_ptxas(text: str, source: str = "") -> list[dict]:
    """Per (kernel, arch) entries from `ptxas -v` output."""
    entries: list[dict] = []
    frames: dict[tuple[str, str], tuple[int, int, int]] = {}
    current: dict | None = None
    arch = ""
    props_for: str | None = None
    for line in text.splitlines():
        m = _RE_ENTRY.search(line)
        if m:
            arch = m.group(2)
            current = {"mangled": m.group(1), "arch": arch, "registers": 0, "smem_bytes": 0,
                       "stack_bytes": 0, "spill_store_bytes": 0, "spill_load_bytes": 0}
            if source:
                current["object"] = source
            entries.append(current)
            continue
        m = _RE_PROPS.search(line)
        if m:
            props_for = m.group(1)
            continue
        m = _RE_FRAME.search(line)
        if m and props_for is not None:
            frames[(props_for, arch)] = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
            props_for = None
            continue
        m = _RE_USED.search(line)
        if m and current is not None:
            current["registers"] = int(m.group(1))
            s = _RE_SMEM.search(line)
            current["smem_bytes"] = int(s.group(1)) if s else 0
    for e in entries:
        stack, st, ld = frames.get((e["mangled"], e["arch"]), (0, 0, 0))
        e.update(stack_bytes=stack, spill_store_bytes=st, spill_load_bytes=ld)
    return entries


def demangle(names: Iterable[str]) -> dict[str, str]:
    names = sorted(set(names))
    tool = shutil.which("c++filt")
    if not tool or not names:
        return {n: n for n in names}
    out = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True)
    lines = out.stdout.splitlines()
    if out.returncode != 0 or len(lines) != len(names):
        return {n: n for n in names}
    return dict(zip(names, lines))


def collect(build_dir: Path) -> list[dict]:
    entries: list[dict] = []
    for rep in sorted(build_dir.rglob("*" + REPORT_SUFFIX)):
        obj = Path(str(rep)[: -len(REPORT_SUFFIX)])
        if not obj.exists():
            continue  # stale: the object is gone
        entries += parse_ptxas(rep.read_text(errors="replace"), str(obj.relative_to(build_dir)))
    names = demangle(e["mangled"] for e in entries)
    for e in entries:
        e["kernel"] = names[e["mangled"]]
    keys = ["kernel", "arch", "registers", "smem_bytes", "stack_bytes", "spill_store_bytes",
            "spill_load_bytes", "mangled", "object"]
    out = [{k: e[k] for k in keys if k in e} for e in entries]
    out.sort(key=lambda e: (e.get("object", ""), e["kernel"], e["arch"]))
    return out


def write_report(build_dir: Path, out: Path, entries: list[dict]) -> None:
    doc = {"generated_by": "scripts/kernel_resources.py", "smem_limit_bytes": SMEM_LIMIT_SM90,
           "kernels": entries}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(out)


def short(name: str, width: int = 70) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."


def print_table(entries: list[dict]) -> None:
    print(f"{'kernel':70s} {'arch':7s} {'regs':>4s} {'smem':>6s} {'stack':>5s} {'spill st/ld':>11s}")
    for e in entries:
        print(f"{short(e['kernel']):70s} {e['arch']:7s} {e['registers']:4d} {e['smem_bytes']:6d} "
              f"{e['stack_bytes']:5d} {e['spill_store_bytes']:5d}/{e['spill_load_bytes']:<5d}")


def cmd_report(args: argparse.Namespace) -> int:
    build = Path(args.build_dir).resolve()
    entries = collect(build)
    write_report(build, Path(args.out) if args.out else build / "kernel_resources.json", entries)
    if args.print:
        print_table(entries)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    build = Path(args.build_dir).resolve()
    entries = collect(build)
    out = Path(args.out) if args.out else build / "kernel_resources.json"
    write_report(build, out, entries)
    if not entries:
        print(f"FAIL: no ptxas reports (*{REPORT_SUFFIX}) under {build}: configure with tests "
              "enabled (tests/static_checks.cmake sets the compiler launcher) and rebuild",
              file=sys.stderr)
        return 1
    print_table(entries)
    bad = []
    for e in entries:
        if e["spill_store_bytes"] or e["spill_load_bytes"]:
            bad.append(f"{e['kernel']} [{e['arch']}]: spills {e['spill_store_bytes']} bytes stored, "
                       f"{e['spill_load_bytes']} loaded")
        if e["smem_bytes"] > args.smem_limit:
            bad.append(f"{e['kernel']} [{e['arch']}]: {e['smem_bytes']} bytes static shared memory "
                       f"> limit {args.smem_limit}")
    print(f"\n{len(entries)} kernel/arch entries; report: {out}")
    for b in bad:
        print("FAIL: " + b, file=sys.stderr)
    return 1 if bad else 0


# ---- check-sass ----------------------------------------------------------------
def find_tool(name: str) -> str | None:
    """`name` (cuobjdump, nvdisasm): $CUOBJDUMP/$NVDISASM, PATH, the toolkit, or
    the PyPI wheels nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm."""
    env = os.environ.get(name.upper())
    if env and os.access(env, os.X_OK):
        return env
    found = shutil.which(name)
    if found:
        return found
    candidates = [Path("/usr/local/cuda/bin") / name]
    roots = list(sys.path)
    try:
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:
        pass
    for r in roots:
        for cu in ("cu13", "cu12"):
            candidates.append(Path(r) / "nvidia" / cu / "bin" / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    return None


def sass_functions(cuobjdump: str, files: list[Path]) -> dict[tuple[str, str], list[str]]:
    """(mangled kernel, arch) -> its SASS lines."""
    out: dict[tuple[str, str], list[str]] = {}
    env = dict(os.environ)
    nvdisasm = find_tool("nvdisasm")
    if nvdisasm:
        env["PATH"] = os.path.dirname(nvdisasm) + os.pathsep + env.get("PATH", "")
    for f in files:
        proc = subprocess.run([cuobjdump, "-sass", str(f)], capture_output=True, text=True,
                              errors="replace", env=env)
        if proc.returncode != 0 and "does not contain device code" not in proc.stderr:
            raise RuntimeError(f"cuobjdump -sass {f} failed: {proc.stderr.strip()}")
        arch, fn = "", None
        for line in proc.stdout.splitlines():
            m = re.search(r"code for (sm_\w+)", line)
            if m:
                arch, fn = m.group(1), None
                continue
            m = re.search(r"Function : (\S+)", line)
            if m:
                fn = m.group(1)
                out.setdefault((fn, arch), [])
                continue
            if fn is not None:
                out[(fn, arch)].append(line)
    return out


def sass_mma(cuobjdump: str, files: list[Path]) -> dict[tuple[str, str], bool]:
    """(mangled kernel, arch) -> whether its SASS holds an HMMA/HGMMA instruction."""
    mma = re.compile(r"\bH(?:G)?MMA\b")
    return {key: any(mma.search(line) for line in lines) for key, lines in sass_functions(cuobjdump, files).items()}


def cmd_check_sass(args: argparse.Namespace) -> int:
    build = Path(args.build_dir).resolve()
    entries = collect(build)
    want = re.compile(args.require_hmma)
    skip = re.compile(args.hmma_exclude) if args.hmma_exclude else None
    # Match the kernel's name and template arguments, not its parameter list
    # (a merge kernel taking flash2_params is not a flash2 MMA kernel).
    def name_of(e: dict) -> str:  # "(anonymous namespace)" is part of the name, not its parameters
        return e["kernel"].replace("(anonymous namespace)::", "").split("(", 1)[0]

    targets = [e for e in entries if want.search(name_of(e))]
    targets = [e for e in targets if not (skip and skip.search(name_of(e)))]
    if not targets:
        print(f"no compiled kernel matches /{args.require_hmma}/ (excluding /{args.hmma_exclude}/): "
              "nothing to check")
        return 0
    tool = find_tool("cuobjdump")
    if tool is None or find_tool("nvdisasm") is None:
        print("FAIL: cuobjdump -sass needs cuobjdump and nvdisasm (not in this toolkit; "
              "$CUOBJDUMP/$NVDISASM unset): pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm "
              "(scripts/requirements.txt)", file=sys.stderr)
        return 1
    objects = sorted({build / e["object"] for e in targets if "object" in e})
    found = sass_mma(tool, objects)
    bad = []
    for e in targets:
        ok = found.get((e["mangled"], e["arch"]))
        status = "HMMA" if ok else ("no MMA" if ok is not None else "no SASS")
        print(f"{short(e['kernel']):70s} {e['arch']:7s} {status}")
        if not ok:
            bad.append(f"{e['kernel']} [{e['arch']}]: {status}")
    for b in bad:
        print("FAIL: " + b, file=sys.stderr)
    print(f"\n{len(targets) - len(bad)}/{len(targets)} kernel/arch entries use tensor cores "
          f"({tool})")
    return 1 if bad else 0


REGISTER_FILE = 65536  # 32-bit registers per SM (and per CTA at most) on sm_90




def gmma_form(e: dict) -> tuple[str, str]:
    """(name, regex) of the wgmma a flash3 kernel must hold in sm_90a SASS: e4m3 x e4m3
    wgmma is QGMMA.64xNx32.F32.E4M3.E4M3 (flash3_fp8), 16-bit wgmma HGMMA."""
    if "e4m3" in e.get("kernel", ""):
        return "QGMMA E4M3", r"\bQGMMA\.\S*\.E4M3\.E4M3\b"
    return "HGMMA", r"\bHGMMA\b"


def hopper_problems(e: dict, sass: list[str] | None, threads: int, consumer_wgs: int,
                    ptxas_report: str = "") -> list[str]:
    """What is wrong with one sm_90a kernel entry (empty: nothing). ptxas_report: the
    object's `ptxas -v` lines, where ptxas says when it serialised wgmma (C7520)."""
    if sass is None:
        return ["no SASS"]
    text = "\n".join(sass)
    gmma, gmma_re = gmma_form(e)
    bad = [f"no {gmma} in SASS"] if not re.search(gmma_re, text) else []
    bad += [f"no {op} in SASS" for op in ("UTMALDG", "USETMAXREG") if not re.search(rf"\b{op}\b", text)]
    if "wgmma.mma_async instructions are serialized" in ptxas_report:
        bad.append("ptxas serialised wgmma (C7520: a wait or branch inside a fence..commit stretch)")
    if e["spill_store_bytes"] or e["spill_load_bytes"]:
        bad.append(f"spills {e['spill_store_bytes']}/{e['spill_load_bytes']} bytes")
    if e["registers"] * threads > REGISTER_FILE:
        bad.append(f"{e['registers']} registers x {threads} threads > {REGISTER_FILE}")
    dec = [int(v, 16) for v in re.findall(r"USETMAXREG\.DEALLOC\S*\s+(0x[0-9a-f]+)", text)]
    inc = [int(v, 16) for v in re.findall(r"USETMAXREG\.(?:TRY_)?ALLOC\S*\s+(?:\w+,\s*)?(0x[0-9a-f]+)", text)]
    if not dec or not inc:
        bad.append(f"setmaxnreg budgets not found (dec {dec}, inc {inc})")
    else:
        total = 128 * max(dec) + 128 * consumer_wgs * max(inc)
        if total > REGISTER_FILE:
            bad.append(f"setmaxnreg 128 x {max(dec)} + {128 * consumer_wgs} x {max(inc)} = {total} > {REGISTER_FILE}")
        pool = e["registers"] * threads  # the CTA's pool is what the launch allocated, not the file
        if total <= REGISTER_FILE and total > pool:
            bad.append(f"setmaxnreg budgets need {total} registers but the launch allocates {e['registers']} x "
                       f"{threads} = {pool}: setmaxnreg.inc would wait forever")
        if max(inc) < e["registers"]:
            bad.append(f"consumer budget {max(inc)} below the launch's {e['registers']} registers")
    return bad


def cmd_check_hopper(args: argparse.Namespace) -> int:
    build = Path(args.build_dir).resolve()
    want = re.compile(args.require)
    targets = [e for e in collect(build) if want.search(e["kernel"].split("(", 1)[0]) and e["arch"] == args.arch]
    if not targets:
        msg = f"no {args.arch} kernel matches /{args.require}/"
        if args.require_sm90a:
            print(f"FAIL: {msg} (90 is in CMAKE_CUDA_ARCHITECTURES: the flash3 TUs must build for sm_90a)",
                  file=sys.stderr)
            return 1
        print(msg + ": nothing to check")
        return 0
    tool = find_tool("cuobjdump")
    if tool is None or find_tool("nvdisasm") is None:
        print("FAIL: cuobjdump -sass needs cuobjdump and nvdisasm (scripts/requirements.txt)", file=sys.stderr)
        return 1
    sass = sass_functions(tool, sorted({build / e["object"] for e in targets if "object" in e}))
    failed = 0
    for e in targets:
        rep = build / (e.get("object", "") + REPORT_SUFFIX)
        report_text = rep.read_text(errors="replace") if "object" in e and rep.exists() else ""
        bad = hopper_problems(e, sass.get((e["mangled"], e["arch"])), args.threads, args.consumer_wgs, report_text)
        name = e["kernel"].split("(", 1)[0].replace("void attnbench::cuda::", "").replace("attnbench::cuda::", "")
        print(f"{short(name, 90):90s} {e['arch']:7s} {e['registers']:4d} regs  {'; '.join(bad) or 'ok'}")
        if bad:
            failed += 1
            print(f"FAIL: {e['kernel']} [{e['arch']}]: {'; '.join(bad)}", file=sys.stderr)
    print(f"\n{len(targets) - failed}/{len(targets)} {args.arch} kernels pass (HGMMA / QGMMA E4M3, UTMALDG, setmaxnreg, 0 spills)")
    return 1 if failed else 0


def mufu_problems(sass: list[str] | None) -> tuple[int, list[str]]:
    """(number of MUFU.EX2 in a kernel's SASS, what is wrong: no SASS, no MUFU.EX2, other MUFU ops)."""
    if sass is None:
        return 0, ["no SASS"]
    ops = [m.group(1) for line in sass for m in [re.search(r"\bMUFU\.(\w+)", line)] if m]
    ex2 = sum(1 for o in ops if o == "EX2")
    bad = [] if ex2 else ["no MUFU.EX2 in SASS"]
    other = sorted({o for o in ops if o != "EX2"})
    if other:
        bad.append("other MUFU functions in SASS: " + ", ".join(other))
    return ex2, bad


def cmd_check_mufu(args: argparse.Namespace) -> int:
    build = Path(args.build_dir).resolve()
    want = re.compile(args.require)
    # The kernel's name without its parameters; "(anonymous namespace)" is part of the name.
    def name_of(e: dict) -> str:
        return e["kernel"].replace("(anonymous namespace)::", "").split("(", 1)[0]

    targets = [e for e in collect(build) if want.search(name_of(e))]
    if not targets:
        print(f"FAIL: no compiled kernel matches /{args.require}/", file=sys.stderr)
        return 1
    tool = find_tool("cuobjdump")
    if tool is None or find_tool("nvdisasm") is None:
        print("FAIL: cuobjdump -sass needs cuobjdump and nvdisasm (scripts/requirements.txt)", file=sys.stderr)
        return 1
    sass = sass_functions(tool, sorted({build / e["object"] for e in targets if "object" in e}))
    failed = 0
    for e in targets:
        n, bad = mufu_problems(sass.get((e["mangled"], e["arch"])))
        print(f"{short(name_of(e), 70):70s} {e['arch']:7s} {n:3d} MUFU.EX2  {'; '.join(bad) or 'ok'}")
        if bad:
            failed += 1
            print(f"FAIL: {e['kernel']} [{e['arch']}]: {'; '.join(bad)}", file=sys.stderr)
    print(f"\n{len(targets) - failed}/{len(targets)} kernel/arch entries issue MUFU.EX2 ({tool})")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "wrap":
        return cmd_wrap(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("report", "check", "check-sass", "check-hopper", "check-mufu"):
        sp = sub.add_parser(name)
        sp.add_argument("--build-dir", required=True)
        sp.add_argument("--out", help="JSON report (default BUILD_DIR/kernel_resources.json)")
        if name == "report":
            sp.add_argument("--print", action="store_true", help="also print the table")
        if name == "check":
            sp.add_argument("--smem-limit", type=int, default=SMEM_LIMIT_SM90)
        if name == "check-sass":
            sp.add_argument("--require-hmma", default=DEFAULT_HMMA_REGEX, metavar="REGEX")
            sp.add_argument("--hmma-exclude", default=DEFAULT_HMMA_EXCLUDE, metavar="REGEX",
                            help="kernels (demangled name) exempt from the HMMA rule")
        if name == "check-mufu":
            sp.add_argument("--require", default="exp2_chains", metavar="REGEX")
        if name == "check-hopper":
            sp.add_argument("--require", default="flash3", metavar="REGEX")
            sp.add_argument("--require-sm90a", action="store_true")
            sp.add_argument("--arch", default="sm_90a", help="the SASS arch whose entries are checked")
            sp.add_argument("--threads", type=int, default=384, help="threads per CTA (flash3: 384)")
            sp.add_argument("--consumer-wgs", type=int, default=2)
    sub.add_parser("wrap", help="compiler launcher: wrap -- nvcc ...")
    args = ap.parse_args(argv)
    return {"report": cmd_report, "check": cmd_check, "check-sass": cmd_check_sass,
            "check-hopper": cmd_check_hopper, "check-mufu": cmd_check_mufu}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
