"""SwiGLU rows of the torch anchor only (fused9's call 2): imports torch_fused.py (a copy of
/work/shared/anchors/torch_fused.py beside this file) and runs its SwiGLU loop -- the same timed(),
rotating(), swiglu() and torch.compile(swiglu), the same shape and M order -- without the 11 GEMMs and
hc_up. Prints the anchor's SwiGLU lines."""
import argparse, json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import torch_fused as tf

ap = argparse.ArgumentParser()
ap.add_argument("--m", default="256,512,1024,1983,2048")
ap.add_argument("--secs", type=float, default=0.6)
ap.add_argument("--json", default="")
a = ap.parse_args()
print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, flush=True)
sw_c = torch.compile(tf.swiglu)
rows = []
for m in [int(x) for x in a.m.split(",")]:
    n, k, calls = tf.SWIGLU
    r = tf.rotating(lambda: (torch.randn(m, k, dtype=torch.float16, device=tf.dev), torch.randn(n, k, dtype=torch.float16, device=tf.dev),
                             torch.randn(n, k, dtype=torch.float16, device=tf.dev)))
    for form, fn in (("eager", tf.swiglu), ("compiled", sw_c)):
        us = tf.timed(lambda: fn(*r()), a.secs)
        rows.append(dict(op="swiglu", form=form, M=m, N=n, K=k, calls=calls, us=us))
        print(f"M={m:5d} swiglu {form:8s} {us:9.2f} us", flush=True)
if a.json:
    with open(a.json, "w") as fh:
        json.dump(rows, fh, indent=1)
