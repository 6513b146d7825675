"""hc_up rows of the torch anchor only (fused6's one short call): imports torch_fused.py (a copy of
/work/shared/anchors/torch_fused.py beside this file) and runs its hc_up loop -- the same timed(),
rotating(), hc_up() and torch.compile(hc_up), the same shapes and M order -- without the 11 GEMMs and
SwiGLU, to fit the call. Prints the anchor's hc_up lines."""
import argparse, json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import torch_fused as tf

ap = argparse.ArgumentParser()
ap.add_argument("--m", default="256,512,1024,1983,2048")
ap.add_argument("--secs", type=float, default=0.4)
ap.add_argument("--json", default="")
a = ap.parse_args()
print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, flush=True)
hc_c = torch.compile(tf.hc_up)
rows = []
for m in [int(x) for x in a.m.split(",")]:
    s, k, calls = tf.HC_UP
    r = tf.rotating(lambda: (torch.randn(m, k, dtype=torch.float16, device=tf.dev), torch.randn(4 * s, k, dtype=torch.float16, device=tf.dev),
                             torch.randn(m, 4, s, dtype=torch.float16, device=tf.dev)))
    for form, fn in (("eager", tf.hc_up), ("compiled", hc_c)):
        us = tf.timed(lambda: fn(*r()), a.secs)
        rows.append(dict(op="hc_up", form=form, M=m, S=s, K=k, calls=calls, us=us))
        print(f"M={m:5d} hc_up  {form:8s} {us:9.2f} us", flush=True)
if a.json:
    with open(a.json, "w") as fh:
        json.dump(rows, fh, indent=1)
