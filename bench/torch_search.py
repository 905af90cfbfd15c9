#!/usr/bin/env python3
"""PyTorch peers of ChronoQL's CUDA search, run by `bench/search.ts --device cuda` on the same
device and shapes:

- the device's own memory bandwidth: a device-to-device copy of 1 GiB (bytes read + written);
- a dense fp16 GEMM of Q x d by d x N (the score matrix alone: no time filter, no selection;
  cuBLAS behind torch.matmul);
- masked top-k, the plain way to do what ChronoQL does: scores, the time filter as a mask,
  topk. Whole (the Q x N scores and mask in memory at once; it may not fit), and over chunks of
  rows whose top-k are merged.

Data like the benchmark's: rows and queries uniform in [-1, 1) and normalised (cosine), validFrom
uniform in [0, 100), a third of the rows closed 1..100 days later, each query asks as of a day in
[60, 100). Prints one JSON object on stdout.
"""
import argparse
import json
import math

import torch


def best_seconds(run, repeats):
    """Best of `repeats` timings with CUDA events, after one warm-up run."""
    run()
    torch.cuda.synchronize()
    best = math.inf
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1000.0)
    return best


def normalised_rows(count, dimension, dtype, generator, device, chunk):
    rows = torch.empty(count, dimension, dtype=dtype, device=device)
    for first in range(0, count, chunk):
        block = torch.rand(min(chunk, count - first), dimension, generator=generator, device=device) * 2 - 1
        rows[first:first + block.shape[0]] = torch.nn.functional.normalize(block, dim=1).to(dtype)
    return rows


def validity(count, generator, device):
    valid_from = torch.randint(0, 100, (count,), generator=generator, device=device, dtype=torch.int32)
    closed = torch.rand(count, generator=generator, device=device) < 1 / 3
    ends = valid_from + 1 + torch.randint(0, 100, (count,), generator=generator, device=device, dtype=torch.int32)
    valid_to = torch.where(closed, ends, torch.full_like(valid_from, 2**31 - 1))
    return valid_from, valid_to


def masked_topk(queries, rows, valid_from, valid_to, as_of, k):
    scores = queries @ rows.T
    valid = (valid_from[None, :] <= as_of[:, None]) & (as_of[:, None] < valid_to[None, :])
    scores.masked_fill_(~valid, -math.inf)
    return torch.topk(scores, k, dim=1)


def chunked_masked_topk(queries, rows, valid_from, valid_to, as_of, k, chunk):
    values, indices = [], []
    for first in range(0, rows.shape[0], chunk):
        last = min(first + chunk, rows.shape[0])
        top = masked_topk(queries, rows[first:last], valid_from[first:last], valid_to[first:last], as_of, min(k, last - first))
        values.append(top.values)
        indices.append(top.indices + first)
    merged = torch.topk(torch.cat(values, dim=1), k, dim=1)
    return merged.values, torch.gather(torch.cat(indices, dim=1), 1, merged.indices)


def guarded(run, repeats):
    """Seconds, or why it could not run (a whole Q x N score matrix may not fit)."""
    try:
        return {"seconds": best_seconds(run, repeats)}
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        return {"error": "out of memory"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--d", type=int, default=384)
    parser.add_argument("--qs", default="1,16,64,256,1024")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk-rows", type=int, default=1_000_000)
    parser.add_argument("--storages", default="fp16,fp32")
    args = parser.parse_args()
    device = torch.device("cuda")
    generator = torch.Generator(device=device).manual_seed(20240501)
    result = {
        "device": torch.cuda.get_device_name(device),
        "torch": torch.__version__,
        "n": args.n,
        "d": args.d,
        "k": args.k,
        "chunkRows": args.chunk_rows,
        "shapes": [],
    }

    copy_bytes = 1 << 30
    source = torch.empty(copy_bytes, dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    copy_seconds = best_seconds(lambda: target.copy_(source), args.repeats)
    result["copy"] = {"bytes": copy_bytes, "seconds": copy_seconds, "GBps": 2 * copy_bytes / copy_seconds / 1e9}
    del source, target

    valid_from, valid_to = validity(args.n, generator, device)
    half_rows = normalised_rows(args.n, args.d, torch.float16, generator, device, args.chunk_rows)
    for storage in args.storages.split(","):
        rows = half_rows if storage == "fp16" else half_rows.float()
        dtype = rows.dtype
        for q in (int(value) for value in args.qs.split(",")):
            queries = torch.nn.functional.normalize(torch.rand(q, args.d, generator=generator, device=device) * 2 - 1, dim=1)
            as_of = torch.randint(60, 100, (q,), generator=generator, device=device, dtype=torch.int32)
            shape = {"storage": storage, "q": q}
            if storage == "fp16":
                half_queries = queries.half()
                shape["gemm"] = guarded(lambda: half_queries @ half_rows.T, args.repeats)
            typed = queries.to(dtype)
            shape["maskedTopk"] = guarded(lambda: masked_topk(typed, rows, valid_from, valid_to, as_of, args.k), args.repeats)
            shape["chunkedMaskedTopk"] = guarded(
                lambda: chunked_masked_topk(typed, rows, valid_from, valid_to, as_of, args.k, args.chunk_rows), args.repeats
            )
            result["shapes"].append(shape)
            torch.cuda.empty_cache()
        del rows
        torch.cuda.empty_cache()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
