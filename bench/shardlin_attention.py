"""shardlin's side of bench/dtensor_attention.py: the Llama decoder layer of
that script written in shardlin IR, compiled and timed through the Python
package (`import shardlin`, docs/python.md).

The layer is the one `layer_classes()` builds for "llama" (RMSNorm eps 1e-6,
q/k/v without bias, rotate-half RoPE, causal SDPA with GQA, o, residual,
RMSNorm, SwiGLU, residual), on one sequence of S tokens, x replicated on the
W ranks (`layouts replicated -> replicated` on every linear): each sub-block
lowers to the rank's heads (or SwiGLU columns) of every row and one
all_reduce of the row-parallel linear's partial sums (docs/attention.md).
The weights are split the way shardlin splits heads for any W:

    W <= Hkv   q in whole GQA groups (block = g D), k and v in whole heads
               (block = D): the ceil rule on Hkv groups for both;
    W >  Hkv   q in whole heads (block = D), k and v replicated, each rank
               slicing the kv heads its query heads read;
    o          its input features chunked like q; gate/up by rows, down by
               columns (the chunk rule on F).
"""

import math


def _chunk(dim, w, block):
    places = ", ".join(str(r) for r in range(w))
    return ("#shardlin.chunk<dim = %d, placements = [%s], block = %d>" %
            (dim, places, block))


def llama_layer_mlir(hq, hkv, w, d, s, f, eps=1e-6):
    """The layer's MLIR text (f32, x [S, H] replicated); entry @layer."""
    h = hq * d
    g = hq // hkv
    replicate_kv = w > hkv
    qblock = d if replicate_kv else g * d
    t = lambda *dims: "tensor<%sxf32>" % "x".join(str(v) for v in dims)
    sh = lambda shape, dim, block: "!shardlin.sharded<%s, %s>" % (
        t(*shape), _chunk(dim, w, block))
    wq = sh((h, h), 0, qblock)
    wo = sh((h, h), 1, qblock)
    wg = sh((f, h), 0, 1)
    wd = sh((h, f), 1, 1)
    kvd = hkv * d
    wkv = (t(kvd, h) + " {shardlin.replicated}" if replicate_kv
           else sh((kvd, h), 0, d))
    x, r, c, ss = t(s, h), t(s, 1), t(d // 2), t(s, d // 2)
    rep = "layouts replicated -> replicated"
    lines = []
    emit = lines.append

    def norm(name, src, weight):
        # Block arguments and body values are named after the norm: a
        # region's names share the function's namespace.
        def body(text):
            for v in ("a", "b", "c", "o", "m", "v", "mean", "q", "p", "u"):
                text = text.replace("%%%s:" % v, "%%%s_%s:" % (name, v))
                text = text.replace("%%%s " % v, "%%%s_%s " % (name, v))
                text = text.replace("%%%s," % v, "%%%s_%s," % (name, v))
                text = text.replace("%%%s\n" % v, "%%%s_%s\n" % (name, v))
            return text
        generic = ("    %%%s = linalg.generic {indexing_maps = [%s], "
                   "iterator_types = [\"parallel\", \"%s\"]} ins(%s) "
                   "outs(%s) {")
        emit(generic % (name + "_sq", "#id, #id", "parallel",
                        "%%%s : %s" % (src, x), "%%e : %s" % x))
        emit(body("    ^bb0(%a: f32, %o: f32):\n      %m = arith.mulf %a, %a "
                  ": f32\n      linalg.yield %m : f32\n") + "    } -> " + x)
        emit(generic % (name + "_ss", "#id, #row", "reduction",
                        "%%%s_sq : %s" % (name, x), "%%z : %s" % r))
        emit(body("    ^bb0(%a: f32, %o: f32):\n      %v = arith.addf %a, %o "
                  ": f32\n      linalg.yield %v : f32\n") + "    } -> " + r)
        emit(generic % (name + "_r", "#id, #id", "parallel",
                        "%%%s_ss : %s" % (name, r), "%%e1 : %s" % r))
        emit(body("    ^bb0(%a: f32, %o: f32):\n      %mean = arith.divf %a, "
                  "%n : f32\n      %v = arith.addf %mean, %eps : f32\n      "
                  "%q = math.rsqrt %v : f32\n      linalg.yield %q : f32\n")
             + "    } -> " + r)
        emit(generic % (name, "#id, #row, #col, #id", "parallel",
                        "%%%s, %%%s_r, %%%s : %s, %s, %s" %
                        (src, name, weight, x, r, t(h)), "%%e : %s" % x))
        emit(body("    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):\n      %p = "
                  "arith.mulf %a, %b : f32\n      %u = arith.mulf %p, %c : "
                  "f32\n      linalg.yield %u : f32\n") + "    } -> " + x)

    emit("#id = affine_map<(d0, d1) -> (d0, d1)>")
    emit("#row = affine_map<(d0, d1) -> (d0, 0)>")
    emit("#col = affine_map<(d0, d1) -> (d1)>")
    emit("func.func @layer(%%x: %s {shardlin.replicated}, %%n1: %s "
         "{shardlin.replicated}, %%wq: %s, %%wk: %s, %%wv: %s, %%wo: %s, "
         "%%cos: %s {shardlin.replicated}, %%sin: %s {shardlin.replicated}, "
         "%%n2: %s {shardlin.replicated}, %%wg: %s, %%wu: %s, %%wd: %s) "
         "-> %s {"
         % (x, t(h), wq, wkv, wkv, wo, ss, ss, t(h), wg, wg, wd, x))
    emit("    %zero = arith.constant 0.0 : f32")
    emit("    %%n = arith.constant %s : f32" % repr(float(h)))
    emit("    %%eps = arith.constant %e : f32" % eps)
    emit("    %%e = tensor.empty() : %s" % x)
    emit("    %%e1 = tensor.empty() : %s" % r)
    emit("    %%z = linalg.fill ins(%%zero : f32) outs(%%e1 : %s) -> %s" %
         (r, r))
    norm("h1", "x", "n1")
    emit("    %%q = shardlin.linear %%h1, %%wq %s : (%s, %s) -> %s" %
         (rep, x, wq, x))
    kvt = t(s, kvd)
    if replicate_kv:
        for v in ("k", "v"):
            emit("    %%%s = shardlin.gemm %%h1, %%w%s transpose_rhs : "
                 "(%s, %s) -> %s" % (v, v, x, t(kvd, h), kvt))
    else:
        for v in ("k", "v"):
            emit("    %%%s = shardlin.linear %%h1, %%w%s %s : (%s, %s) -> %s" %
                 (v, v, rep, x, wkv, kvt))
    emit("    %%qr = shardlin.rope %%q, %%cos, %%sin {head_dim = %d : i64} : "
         "%s, %s, %s -> %s" % (d, x, ss, ss, x))
    emit("    %%kr = shardlin.rope %%k, %%cos, %%sin {head_dim = %d : i64} : "
         "%s, %s, %s -> %s" % (d, kvt, ss, ss, kvt))
    emit("    %%att = shardlin.attention %%qr, %%kr, %%v {head_dim = %d : "
         "i64, causal} : %s, %s, %s -> %s" % (d, x, kvt, kvt, x))
    emit("    %%ao = shardlin.linear %%att, %%wo %s : (%s, %s) -> %s" %
         (rep, x, wo, x))
    emit("    %%hh = arith.addf %%x, %%ao : %s" % x)
    norm("h2", "hh", "n2")
    # SwiGLU as Megatron's MLP on a replicated x: gate and up give the
    # rank's F chunk of every row (`replicated -> features`), down sums
    # the chunks' partial products (`features -> replicated`: one
    # all_reduce).
    # The rank's F chunk: static where W divides F (the verifier wants it
    # then), dynamic where the chunks differ.
    ft = t(s, f // w) if f % w == 0 else "tensor<%dx?xf32>" % s
    emit("    %%g = shardlin.linear %%h2, %%wg layouts replicated -> features"
         " : (%s, %s) -> %s" % (x, wg, ft))
    emit("    %%u = shardlin.linear %%h2, %%wu layouts replicated -> features"
         " : (%s, %s) -> %s" % (x, wg, ft))
    emit("    %%a = linalg.generic {indexing_maps = [#id, #id, #id], "
         "iterator_types = [\"parallel\", \"parallel\"]} ins(%%g, %%u : "
         "%s, %s) outs(%%g : %s) {" % (ft, ft, ft))
    emit("    ^bb0(%sg_g: f32, %sg_u: f32, %sg_o: f32):\n"
         "      %sg_one = arith.constant 1.0 : f32\n"
         "      %sg_n = arith.negf %sg_g : f32\n"
         "      %sg_e = math.exp %sg_n : f32\n"
         "      %sg_d = arith.addf %sg_one, %sg_e : f32\n"
         "      %sg_s = arith.divf %sg_g, %sg_d : f32\n"
         "      %sg_a = arith.mulf %sg_s, %sg_u : f32\n"
         "      linalg.yield %sg_a : f32\n    } -> " + ft)
    emit("    %%dn = shardlin.linear %%a, %%wd layouts features -> replicated"
         " : (%s, %s) -> %s" % (ft, wd, x))
    emit("    %%y = arith.addf %%hh, %%dn : %s" % x)
    emit("    return %%y : %s" % x)
    emit("}")
    return "\n".join(lines) + "\n"


def rope_half_tables(s, d, theta=10000.0):
    """cos and sin [S, D/2] of the script's rope() (its tables' first
    halves), float64 lists of rows."""
    inv = [1.0 / theta ** (2 * i / d) for i in range(d // 2)]
    cos = [[math.cos(p * v) for v in inv] for p in range(s)]
    sin = [[math.sin(p * v) for v in inv] for p in range(s)]
    return cos, sin


def chunk_bounds(spec, n, w):
    """A sharded argument's W chunk bounds on its dim of size n: the
    explicit ones, else the ceil rule (ChunkShardingSpec's)."""
    if spec.get("bounds"):
        return list(spec["bounds"])
    size = -(-n // w)
    return [min(n, i * size) for i in range(w + 1)]


def per_rank_chunks(np, array, spec, w):
    """One contiguous array per rank: the chunk its placement gives it."""
    dim = spec["dim"]
    b = chunk_bounds(spec, array.shape[dim], w)
    chunks = [None] * w
    for i, rank in enumerate(spec["placements"]):
        index = [slice(None)] * array.ndim
        index[dim] = slice(b[i], b[i + 1])
        chunks[rank] = np.ascontiguousarray(array[tuple(index)])
    return chunks


def layer_arguments(np, dense, x, s, d, w, program):
    """@layer's arguments from the script's dense Llama layer (f32): the
    sharded weights as per-rank chunks (no copy inside a run)."""
    def f32(t):
        return np.ascontiguousarray(t.detach().cpu().numpy(),
                                    dtype=np.float32)

    cos, sin = rope_half_tables(s, d)
    values = [f32(x[0]), f32(dense.norm1.weight),
              f32(dense.attention.wq.weight), f32(dense.attention.wk.weight),
              f32(dense.attention.wv.weight), f32(dense.attention.wo.weight),
              np.asarray(cos, dtype=np.float32),
              np.asarray(sin, dtype=np.float32), f32(dense.norm2.weight),
              f32(dense.mlp.w1.weight), f32(dense.mlp.w3.weight),
              f32(dense.mlp.w2.weight)]
    out = []
    for value, arg in zip(values, program.arguments):
        out.append(per_rank_chunks(np, value, arg["chunks"], w)
                   if arg["sharded"] else value)
    return out


def time_forward(case, args, make, dense_layer):
    """shardlin's entry of one llama case: the layer compiled for W ranks,
    its output checked once against the script's float64 layer on the same
    weights and x (bound args.shardlin_bound of max |y|), then the forward
    timed: args.warmup runs, then args.steps runs (program.run on W threads,
    one BLAS thread each; each run's wall time, which is the slowest
    rank's, and the process's CPU time, the W rank threads'), the
    medians."""
    import time

    import numpy as np
    import torch

    import shardlin
    from torch_timing import median

    model, hq, hkv, w = case
    # S as the DTensor side has it (rounded up to a multiple of W).
    d, s, h = args.d, -(-args.seq // w) * w, hq * args.d
    f = -(-8 * h // 3 // 64) * 64
    entry = {"batch": 1, "seq": s, "head_dim": d, "hidden": h, "ffn": f,
             "layout": "x replicated (one sequence of S rows on every "
                       "rank), one all_reduce per sub-block"}
    try:
        program = shardlin.compile(llama_layer_mlir(hq, hkv, w, d, s, f),
                                   entry="layer", world_size=w)
    except Exception as e:  # a compile failure is this case's outcome
        entry.update(outcome="REFUSED", detail=str(e).splitlines()[0])
        return entry
    entry["collectives"] = [c["op"] for c in program.collectives]
    dense = dense_layer(make, case, d, torch.float64)
    g = torch.Generator().manual_seed(11)
    x = torch.rand(1, s, h, dtype=torch.float64, generator=g) * 2 - 1
    with torch.no_grad():
        want = dense(x)[0].numpy()
    run_args = layer_arguments(np, dense, x, s, d, w, program)
    options = dict(world_size=w, blas_threads=1, check_replicated=False)
    got = program.run(*run_args, per_rank=True, **options)
    err = max(float(np.abs(r[0].astype(np.float64) - want).max())
              for r in got) / float(np.abs(want).max())
    entry["output_rel_err"] = err
    if not err <= args.shardlin_bound:
        entry.update(outcome="WRONG", detail="output max rel err %.3g "
                     "(bound %g)" % (err, args.shardlin_bound))
        return entry
    entry.update(outcome="ok", detail="output max rel err %.2g (f32 "
                 "against float64)" % err)
    times, cpu = [], []
    for i in range(args.warmup + args.steps):
        t0, c0 = time.monotonic(), time.process_time()
        program.run(*run_args, **options)
        if i >= args.warmup:
            times.append(time.monotonic() - t0)
            # Every thread of this process: the W rank threads.
            cpu.append(time.process_time() - c0)
    entry["forward_s"] = times
    entry["forward_s_median"] = median(times)
    entry["forward_cpu_s"] = cpu
    entry["forward_cpu_s_median"] = median(cpu)
    return entry


def time_step(case, args, make, dense_layer):
    """shardlin's training step of one llama case (no optimizer): the layer
    differentiated by `shardlin-opt --shardlin-generate-backward`
    (recompute=never), @layer_forward_saving then @layer_backward on the
    saved values, each through program.run (the saved values come back to
    Python per rank and go in again: copies the step in one runtime run
    would not make). dx checked once against the float64 layer's x.grad
    (bound args.shardlin_bound of max |dx|), then args.warmup steps and
    args.steps timed steps: wall and CPU time medians."""
    import subprocess
    import time

    import numpy as np
    import torch

    import shardlin
    from torch_timing import median

    model, hq, hkv, w = case
    d, s, h = args.d, -(-args.seq // w) * w, hq * args.d
    f = -(-8 * h // 3 // 64) * 64
    out = subprocess.run([args.shardlin_opt, "-",
                          "--shardlin-generate-backward=recompute=never"],
                         input=llama_layer_mlir(hq, hkv, w, d, s, f),
                         capture_output=True, text=True)
    if out.returncode:
        return {"outcome": "REFUSED",
                "detail": (out.stderr.strip().splitlines() or ["?"])[0]}
    try:
        fw = shardlin.compile(out.stdout, entry="layer_forward_saving",
                              world_size=w)
        bw = shardlin.compile(out.stdout, entry="layer_backward",
                              world_size=w)
    except Exception as e:
        return {"outcome": "REFUSED", "detail": str(e).splitlines()[0]}
    dense = dense_layer(make, case, d, torch.float64)
    g = torch.Generator().manual_seed(11)
    x = torch.rand(1, s, h, dtype=torch.float64, generator=g) * 2 - 1
    dy = torch.rand(1, s, h, dtype=torch.float64, generator=g) * 2 - 1
    xr = x.clone().requires_grad_(True)
    (dense(xr) * dy).sum().backward()
    want = xr.grad[0].numpy()
    fw_args = layer_arguments(np, dense, x, s, d, w, fw)
    dy32 = np.ascontiguousarray(dy[0].numpy(), dtype=np.float32)
    options = dict(world_size=w, blas_threads=1, check_replicated=False)

    def step():
        saved = fw.run(*fw_args, per_rank=True, **options)
        rest = [[saved[r][i] for r in range(w)]
                for i in range(1, len(saved[0]))]
        return bw.run(*(fw_args + [dy32] + rest), per_rank=True, **options)

    grads = step()
    err = max(float(np.abs(r[0].astype(np.float64) - want).max())
              for r in grads) / float(np.abs(want).max())
    entry = {"dx_rel_err": err, "saved_values": len(
        fw.results) - 1}
    if not err <= args.shardlin_bound:
        entry.update(outcome="WRONG", detail="dx max rel err %.3g" % err)
        return entry
    times, cpu = [], []
    for i in range(args.warmup + args.steps):
        t0, c0 = time.monotonic(), time.process_time()
        step()
        if i >= args.warmup:
            times.append(time.monotonic() - t0)
            cpu.append(time.process_time() - c0)
    entry.update(outcome="ok", detail="dx max rel err %.2g" % err,
                 step_s=times, step_s_median=median(times),
                 step_cpu_s=cpu, step_cpu_s_median=median(cpu))
    return entry
