"""Launch shapes on this GPU: bench.py's large cases under each block size and items per thread.

    python benchmarks/tune_launch.py [--blocks 128 256] [--items 1 2 4] [--only SUBSTRING] [--reps 20]

Each shape runs in a process of its own (the kernels take the shape as compile-time defines),
with every family's items per thread set to the same number; the table gives each case's GPU
time (a spin kernel first) as %D2D of a 1 GiB copy measured in that process, and which kernel
family ran it. Per family, the shape that wins its cases is the one to put in
``kernels.LAUNCH_SHAPES`` for this card's memory system.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys


def _child(block: int, items: int, only: str, reps: int) -> None:
    import cupy as cp
    from bench import CASES, copy_time_us, device_time_us

    import cudadml as cd
    from cudadml.backends import kernels
    from cudadml.run import runner

    kernels.use_launch_shape(block, dict.fromkeys(kernels.items_per_thread(), items))
    d2d = 2 * 2**30 / copy_time_us(reps) / 1e3
    rows = {}
    for name, make in CASES:
        if only not in name:
            continue
        fns = make()
        run = functools.partial(fns["cudadml"], cd)
        kernels._compiled.clear()  # (loaded again from the compile cache: what this case loads names its family)
        runner._CACHE.clear()
        run()
        family = ", ".join(sorted({n.split("<", 1)[0] for _, n in kernels._compiled}))
        rows[name] = (100 * fns["bytes"] / device_time_us(run, reps) / 1e3 / d2d, family)
        del fns, run
        cp.get_default_memory_pool().free_all_blocks()
    print(json.dumps(rows))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--items", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--only", default="")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--child", type=int, nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(*args.child, args.only, args.reps)
        return 0
    shapes = [(b, n) for b in args.blocks for n in args.items]
    results = {}
    for block, items in shapes:
        command = [sys.executable, __file__, "--child", str(block), str(items), "--only", args.only]
        done = subprocess.run(
            [*command, "--reps", str(args.reps)], capture_output=True, text=True, cwd=os.path.dirname(__file__)
        )
        if done.returncode:
            print(f"block {block} items {items}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
            continue
        results[block, items] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"# block {block}, items {items}: done", file=sys.stderr, flush=True)
    names = list(next(iter(results.values()))) if results else []
    head = " | ".join(f"{b}x{n}" for b, n in results)
    print(f"| case | family | {head} |\n|---|---|" + "---:|" * len(results))
    for name in names:
        family = next(r[name][1] for r in results.values() if name in r)
        cells = " | ".join(f"{r[name][0]:.1f}" if name in r else "-" for r in results.values())
        print(f"| {name} | {family} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
