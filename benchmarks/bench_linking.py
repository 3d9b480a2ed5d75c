"""How much LLVM IR numba links into callers during a warmup, and what finalizing it costs.

    python benchmarks/bench_linking.py [--steps K [K ...]] [--top 15]

Runs ``touche.warmup`` in this one process (``jobs=1``) on an empty ``NUMBA_CACHE_DIR`` with
numba's ``CPUCodeLibrary.finalize`` wrapped: for every library finalized it records the lines of
its own IR, the lines of the modules linked into it (each callee's module for linking, which holds
the callee and everything linked into it), and the CPU time of the finalize (linking, optimizing
and generating machine code). Compare ``TOUCHE_SEPARATE_KERNELS=0`` (numba's linking everywhere)
with the default (big kernels called by name, docs/KERNELS.md). ``--steps`` runs only those warmup
steps (indices into ``touche._warmup.STEPS``) for a quick look.

It also lists the kernel source lines where numba lowered an assignment of an array into an
array view (``out[i] = point``): each links numba's shape-mismatch error path
(``raise_with_shape_context``, ~2,000 lines) into its kernel; kernels copy with
``touche._kernels.base.vec.copy_into`` instead (docs/KERNELS.md), so the list should be empty.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="*", help="warmup step indices (default: all)")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="touche-linking-")

    import numba.core.codegen as codegen

    records = []
    finalize = codegen.CPUCodeLibrary.finalize

    def lines(module):
        return str(module).count("\n")

    def measured_finalize(library):
        own = lines(library._final_module)
        linked, seen = [], set()
        for callee in library._linking_libraries:
            if callee not in seen:
                seen.add(callee)
                linked.append((callee.name, lines(callee._get_module_for_linking())))
        started = time.process_time()
        finalize(library)
        records.append((library.name, own, linked, time.process_time() - started))

    codegen.CPUCodeLibrary.finalize = measured_finalize

    import numba.np.arrayobj as arrayobj
    from numba.core import types

    slice_sites = collections.Counter()
    fancy_setslice = arrayobj.fancy_setslice

    def recorded_setslice(context, builder, sig, args, index_types, indices):
        if isinstance(sig.args[2], types.Buffer):  # an array assigned into an array view
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_name != "lower_inst":
                frame = frame.f_back
            inst = frame.f_locals.get("inst") if frame is not None else None
            slice_sites[f"{inst.loc.filename}:{inst.loc.line}" if inst is not None else "?"] += 1
        return fancy_setslice(context, builder, sig, args, index_types, indices)

    arrayobj.fancy_setslice = recorded_setslice  # setitem_array looks it up by name when lowering
    import touche._warmup as warmup
    from touche._kernels.base import jit

    started = time.perf_counter()
    warmup.run(jobs=1, progress=False, steps=args.steps)
    wall = time.perf_counter() - started

    own = sum(record[1] for record in records)
    linked = sum(size for record in records for _, size in record[2])
    seconds = sum(record[3] for record in records)
    print(f"separate compilation threshold: {jit.SEPARATE_MIN_LINES} lines (None = off)")
    print(f"warmup in one process: {wall:.1f} s wall; {len(records)} libraries finalized")
    print(f"IR lines: own {own:,}, linked into callers {linked:,}; finalize {seconds:.1f} CPU-s")
    repeated = collections.Counter()
    users = collections.Counter()
    for _, _, callees, _ in records:
        for name, size in callees:
            repeated[name] += size
            users[name] += 1
    print("\nmost linked callees (lines linked in all, callers):")
    for name, total in repeated.most_common(args.top):
        print(f"  {total:9,d}  {users[name]:4d}  {name}")
    print(f"\narray-into-view assignments lowered with numba's shape check: {len(slice_sites)} source lines")
    for site, count in sorted(slice_sites.items()):
        print(f"  {site} ({count}x)")


if __name__ == "__main__":
    main()
