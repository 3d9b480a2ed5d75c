"""Four-lane float64 building blocks for the ray traversal (bvh_rays), written as numba
intrinsics that emit LLVM vector IR directly.

Why intrinsics: numba turns off LLVM's SLP vectorizer (``NUMBA_SLP_VECTORIZE=0``) and fully
unrolls 4-trip loops before the loop vectorizer sees them, so "test four boxes at once" written as
a ``for j in range(4)`` loop stays scalar (checked in the generated assembly). These functions
spell the same arithmetic on ``<4 x double>`` values instead. They are ordinary IEEE operations
(fsub, fmul, fadd, fneg, select on ordered compares; no fast-math flags, no fused multiply-add), so
each lane computes exactly what the scalar code in the comments computes: the triangle lanes are
bit-identical to ``bvh_rays.hit_triangle`` / ``ray_polytopes._ray_tri``.

Memory is read with unaligned vector loads (alignment 4 / 8): correct for any numpy array, and as
fast as aligned loads on current x86 / ARM cores. Rows are addressed through numba's array
struct (C-contiguous 2-D arrays), results go to small caller-owned scratch arrays (no allocation).
"""
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

_F64 = ir.DoubleType()
_F32 = ir.FloatType()
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_V4D = ir.VectorType(_F64, 4)
_V4F = ir.VectorType(_F32, 4)


def _row_pointer(context, builder, array_type, array, row_type, row):
    """Pointer to array[row, 0] of a C-contiguous 2-D array."""
    ary = context.make_array(array_type)(context, builder, array)
    zero = context.get_constant(types.intp, 0)
    row = context.cast(builder, row, row_type, types.intp)
    return cgutils.get_item_pointer(context, builder, array_type, ary, [row, zero], wraparound=False)


def _splat(builder, x):
    v = builder.insert_element(ir.Constant(_V4D, ir.Undefined), x, ir.Constant(_I32, 0))
    return builder.shuffle_vector(v, ir.Constant(_V4D, ir.Undefined), ir.Constant(ir.VectorType(_I32, 4), [0] * 4))


def _const(x):
    return ir.Constant(_V4D, [x] * 4)


def _fabs(builder, v):
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_V4D, [_V4D]), "llvm.fabs.v4f64")
    return builder.call(fn, [v])


def _mask(builder, lanes):
    """<4 x i1> -> int64 bit mask (lane j -> bit j)."""
    return builder.zext(builder.bitcast(lanes, ir.IntType(4)), _I64)


def _store4(context, builder, array_type, array, offset, vector):
    """array[offset : offset + 4] = vector (1-D float64 scratch)."""
    ary = context.make_array(array_type)(context, builder, array)
    p = builder.gep(ary.data, [ir.Constant(_I64, offset)])
    builder.store(vector, builder.bitcast(p, _V4D.as_pointer()), align=8)


def _check_2d(array, dtype, name):
    if not (isinstance(array, types.Array) and array.ndim == 2 and array.layout == "C" and array.dtype == dtype):
        raise TypeError(f"{name} must be a C-contiguous 2-D {dtype} array, got {array}")


def _check_scratch(array, name):
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.float64):
        raise TypeError(f"{name} must be a 1-D float64 array, got {array}")


@intrinsic
def box4(typingctx, records, row, ox, oy, oz, ix, iy, iz, best, slack, out_near):
    """Slab test of one ray against four float32 boxes stored SoA in ``records[row, 0:24]``
    (columns: min x, min y, min z, max x, max y, max z, four lanes each). Per lane, in float64,
    exactly bvh_rays.ray_slab::

        t0 = (lo - o) * inv; t1 = (hi - o) * inv; near/far = ordered min/max per axis,
        near = max over axes, far = min over axes (``x if x > y else y`` selects),
        near -= slack * |near|; far += slack * |far|
        hit = near <= far and far >= 0 and near <= best

    Writes the four widened ``near`` values to ``out_near[0:4]`` and returns the hit lanes as a
    bit mask. A lane whose box holds NaN (an empty child slot) never hits: NaN in the x slab
    makes ``near`` NaN and every later select keeps it."""
    _check_2d(records, types.float32, "records")
    _check_scratch(out_near, "out_near")
    sig = types.int64(records, row, ox, oy, oz, ix, iy, iz, best, slack, out_near)

    def codegen(context, builder, signature, args):
        ptr = _row_pointer(context, builder, signature.args[0], args[0], signature.args[1], args[1])

        def load(column):
            p = builder.gep(ptr, [ir.Constant(_I64, column)])
            return builder.fpext(builder.load(builder.bitcast(p, _V4F.as_pointer()), align=4), _V4D)

        origin = [_splat(builder, args[2 + k]) for k in range(3)]
        inverse = [_splat(builder, args[5 + k]) for k in range(3)]
        near = far = None
        for axis in range(3):
            t0 = builder.fmul(builder.fsub(load(4 * axis), origin[axis]), inverse[axis])
            t1 = builder.fmul(builder.fsub(load(12 + 4 * axis), origin[axis]), inverse[axis])
            less = builder.fcmp_ordered("<", t0, t1)
            lo = builder.select(less, t0, t1)
            hi = builder.select(less, t1, t0)
            if near is None:
                near, far = lo, hi
            else:
                near = builder.select(builder.fcmp_ordered(">", lo, near), lo, near)
                far = builder.select(builder.fcmp_ordered("<", hi, far), hi, far)
        slack_v = _splat(builder, args[9])
        near = builder.fsub(near, builder.fmul(slack_v, _fabs(builder, near)))
        far = builder.fadd(far, builder.fmul(slack_v, _fabs(builder, far)))
        hit = builder.and_(
            builder.fcmp_ordered("<=", near, far),
            builder.and_(builder.fcmp_ordered(">=", far, _const(0.0)),
                         builder.fcmp_ordered("<=", near, _splat(builder, args[8]))),
        )
        _store4(context, builder, signature.args[10], args[10], 0, near)
        return _mask(builder, hit)

    return sig, codegen


@intrinsic
def triangle4(typingctx, blocks, row, ox, oy, oz, dx, dy, dz, best, out):
    """The rejection tests of bvh_rays.hit_triangle on four triangles stored SoA in
    ``blocks[row, 0:36]`` (columns a x, y, z, ab x, y, z, ac x, y, z; four lanes each), lane by
    lane with the scalar code's exact arithmetic::

        n = ab x ac (vec.cross); denom = -(d . n); reject denom == 0
        ap = o - a; tn = ap . n; flip the signs of denom, tn, vn, wn when denom < 0
        reject tn < 0 or tn > best * denom * (1 + 1e-14)
        e = ap x d; vn = ac . e; wn = -(ab . e); reject vn < 0, wn < 0, vn + wn > denom

    (ordered compares: NaN rejects nothing, as in the scalar ``if`` chain). Writes ``tn`` to
    ``out[0:4]`` and ``denom`` to ``out[4:8]``; returns the lanes NOT rejected as a bit mask. The
    caller divides ``t = tn / denom`` and applies the final ``t <= best`` / ``t != inf`` test.
    All-zero padding lanes have n = 0 and are rejected (denom == 0)."""
    _check_2d(blocks, types.float64, "blocks")
    _check_scratch(out, "out")
    sig = types.int64(blocks, row, ox, oy, oz, dx, dy, dz, best, out)

    def codegen(context, builder, signature, args):
        ptr = _row_pointer(context, builder, signature.args[0], args[0], signature.args[1], args[1])

        def load(column):
            p = builder.gep(ptr, [ir.Constant(_I64, 4 * column)])
            return builder.load(builder.bitcast(p, _V4D.as_pointer()), align=8)

        fmul, fadd, fsub, fneg = builder.fmul, builder.fadd, builder.fsub, builder.fneg
        ox_, oy_, oz_, dx_, dy_, dz_ = (_splat(builder, a) for a in args[2:8])
        ax, ay, az, abx, aby, abz, acx, acy, acz = (load(c) for c in range(9))
        nx = fsub(fmul(aby, acz), fmul(abz, acy))
        ny = fsub(fmul(abz, acx), fmul(abx, acz))
        nz = fsub(fmul(abx, acy), fmul(aby, acx))
        zero = _const(0.0)
        denom = fneg(fadd(fadd(fmul(dx_, nx), fmul(dy_, ny)), fmul(dz_, nz)))
        reject = builder.fcmp_ordered("==", denom, zero)
        apx = fsub(ox_, ax)
        apy = fsub(oy_, ay)
        apz = fsub(oz_, az)
        tn = fadd(fadd(fmul(apx, nx), fmul(apy, ny)), fmul(apz, nz))
        flip = builder.fcmp_ordered("<", denom, zero)
        denom = builder.select(flip, fneg(denom), denom)
        tn = builder.select(flip, fneg(tn), tn)
        limit = fmul(fmul(_splat(builder, args[8]), denom), _const(1.0 + 1e-14))
        reject = builder.or_(reject, builder.or_(builder.fcmp_ordered("<", tn, zero),
                                                 builder.fcmp_ordered(">", tn, limit)))
        ex = fsub(fmul(apy, dz_), fmul(apz, dy_))
        ey = fsub(fmul(apz, dx_), fmul(apx, dz_))
        ez = fsub(fmul(apx, dy_), fmul(apy, dx_))
        vn = fadd(fadd(fmul(acx, ex), fmul(acy, ey)), fmul(acz, ez))
        wn = fneg(fadd(fadd(fmul(abx, ex), fmul(aby, ey)), fmul(abz, ez)))
        vn = builder.select(flip, fneg(vn), vn)
        wn = builder.select(flip, fneg(wn), wn)
        reject = builder.or_(reject, builder.or_(builder.fcmp_ordered("<", vn, zero),
                                                 builder.fcmp_ordered("<", wn, zero)))
        reject = builder.or_(reject, builder.fcmp_ordered(">", fadd(vn, wn), denom))
        _store4(context, builder, signature.args[9], args[9], 0, tn)
        _store4(context, builder, signature.args[9], args[9], 4, denom)
        return _mask(builder, builder.not_(reject))

    return sig, codegen
