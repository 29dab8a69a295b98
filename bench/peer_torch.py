#!/usr/bin/env python3
"""The peer a user would otherwise run: the GPN companion's own PyTorch
modules, in eager mode on the CPU, on bench_engine's baseline shapes
(bench/engine.c): Transformer++ 12 layers, d 768, V 32000, 12 heads, FFN 2816
(--tpp-ffn, as bench_engine), tied head; and, when fla is importable, GDN 10
layers, d 768, V 32000, 6 heads of d_k 128 (expand_v 2: d_v 256), FFN 1536,
through the companion's src/torch/models/gdn wrapper. Random weights. Not a
test: numbers depend on the machine (docs/performance.md says how to run it).

What is timed: a forward pass over B windows of T tokens (embedding, every
block, the final norm and the output head's logits of every position, a
window at a time, reduced to their log-sum-exp), under
torch.no_grad(), best of --repeats; tokens/s = B * T / seconds. The companion's
modules have no KV cache: a window is one parallel pass, which is how the
companion evaluates and what recording a window with it would cost. gpnscope
decodes token by token (the engine's step, what record and eval run);
bench_engine times that step at position T (the "engine tok/s" column).

usage: peer_torch.py [--companion SRC] [--batches 1,16,64] [--window T]
                     [--threads N] [--repeats R] [--tpp-ffn N] [--quick]
  SRC: a checkout of the companion code (default $GPNSCOPE_COMPANION_SRC).
  torch: Debian's python3-torch (1.13 lacks F.scaled_dot_product_attention:
  a plain causal softmax stands in, as in tests/reference/tpp_torch_companion.py).
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "reference"))


def time_forward(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def head_lse(torch, final, head):
    """The output head's logits at every position, one window at a time (B x T x V
    floats at once would be 8 GB at batch 64, T 1024), each reduced to its
    log-sum-exp as an NLL needs: what the companion's chunked CE does."""
    return [torch.logsumexp(head(final[b]), dim=-1) for b in range(final.shape[0])]


def bench_tpp(torch, Config, Transformer, args):
    cfg = Config(vocab_size=32000, hidden_dim=768, n_layers=12, n_heads=12, ffn_dim=args.tpp_ffn)
    torch.manual_seed(0)
    model = Transformer(cfg).float().eval()
    n_params = sum(p.numel() for p in model.parameters())
    print("Transformer++ (the companion's src/torch/models/transformer): 12 layers, d 768, V 32000, 12 heads, "
          "FFN %d, tied head: %.1f M params" % (args.tpp_ffn, n_params / 1e6))
    W = model.embedding.weight

    def forward(x):
        h = model.embedding(x)
        for block in model.blocks:
            h = block(h)
        return head_lse(torch, model.norm(h), lambda f: f @ W.T)

    return forward


def bench_gdn(torch, src):
    try:
        from fla.models.gated_deltanet import GatedDeltaNetConfig  # noqa: F401
    except Exception as e:  # fla needs triton; Debian has neither
        print("GDN: skipped: fla is not importable (%s: %s); the companion's GDN is fla's GatedDeltaNetModel"
              % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        return None
    import importlib
    import types
    pkg = types.ModuleType("src.torch.models.gdn")  # its __init__ imports the trainer: not run (as the harness)
    pkg.__path__ = [os.path.join(src, "src", "torch", "models", "gdn")]
    sys.modules[pkg.__name__] = pkg
    cfg_mod = importlib.import_module("src.torch.models.gdn.config")
    gdn_mod = importlib.import_module("src.torch.models.gdn.model")
    cfg = cfg_mod.GDNConfig(vocab_size=32000, hidden_dim=768, n_layers=10, n_heads=6, head_dim=128, ffn_dim=1536,
                            expand_v=2.0)
    torch.manual_seed(0)
    model = gdn_mod.GDN(cfg).float().eval()
    print("GDN (the companion's src/torch/models/gdn over fla): 10 layers, d 768, V 32000, 6 heads of 128/256, "
          "FFN 1536: %.1f M params" % (sum(p.numel() for p in model.parameters()) / 1e6))

    def forward(x):
        return head_lse(torch, model.model(x).last_hidden_state, model.lm_head)

    return forward


def run(torch, forward, args):
    print(" batch  window   tokens/s   ms/window-batch")
    for B in args.batches:
        x = torch.randint(3, 32000, (B, args.window))
        with torch.no_grad():
            forward(x)  # warm-up: allocations, first-call costs
            s = time_forward(lambda: forward(x), args.repeats)
        print("%6d  %6d  %9.1f  %12.1f" % (B, args.window, B * args.window / s, s * 1e3))
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--companion", default=os.environ.get("GPNSCOPE_COMPANION_SRC"),
                    help="a checkout of the companion code (default: $GPNSCOPE_COMPANION_SRC)")
    ap.add_argument("--batches", default="1,16,64", help="comma-separated batch sizes (default 1,16,64)")
    ap.add_argument("--window", type=int, default=1024, help="tokens per window, T (default 1024, the demo's)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's own choice)")
    ap.add_argument("--repeats", type=int, default=3, help="timed passes per batch, the best kept (default 3)")
    ap.add_argument("--tpp-ffn", type=int, default=2816, help="the Transformer's FFN width (default 2816, as bench_engine)")
    ap.add_argument("--quick", action="store_true", help="batches 1,16, window 64, one pass: a smoke run")
    args = ap.parse_args()
    if args.quick:
        args.batches, args.window, args.repeats = "1,16", 64, 1
    args.batches = [int(b) for b in args.batches.split(",")]
    if not args.companion or not os.path.isfile(os.path.join(args.companion, "src", "torch", "models", "transformer",
                                                             "model.py")):
        sys.exit("peer_torch.py: --companion (or GPNSCOPE_COMPANION_SRC): a checkout of the companion code holding "
                 "src/torch/models/transformer, not %r" % args.companion)
    try:
        import torch
    except ImportError:
        sys.exit("peer_torch.py: no torch in %s (Debian: apt-get install python3-torch)" % sys.executable)
    from tpp_torch_companion import load_companion  # the harness's import of the companion's files
    if args.threads:
        torch.set_num_threads(args.threads)
    Config, Transformer = load_companion(args.companion)
    print("torch %s, %d threads, eager mode, CPU, float32" % (torch.__version__, torch.get_num_threads()))
    run(torch, bench_tpp(torch, Config, Transformer, args), args)
    gdn = bench_gdn(torch, args.companion)
    if gdn:
        run(torch, gdn, args)
    quick = " --quick" if args.quick else ""
    print("\ngpnscope on the same shapes (token-by-token steps; a Release build):\n"
          "  build/bench/bench_engine --only tpp%s    # engine tok/s at batch %s, the Transformer at context %s\n"
          "  build/bench/bench_engine --only gdn%s"
          % (quick, "1, 16" if args.quick else "1, 16, 64, 256", "64" if args.quick else "1024 and 2048", quick))


if __name__ == "__main__":
    main()
