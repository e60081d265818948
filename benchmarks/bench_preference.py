"""Speed of the preference models against independent references (run from the repo root)."""
import time, warnings
import numpy as np, pandas as pd
from scipy import optimize, special
from bayesjudge.datasets import simulate_autorater
from bayesjudge.data import validate_annotations, validate_labels, BINARY
from bayesjudge.inference import ConvergenceWarning
from bayesjudge.models.preference import PreferenceDistribution, TemperatureScaling

def best(f, n=5):
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return min(ts)

# --- TemperatureScaling MAP vs scipy (hard labels, 500 rows, flat priors)
sim = simulate_autorater(500, 1, temperature=2.0, bias=0.3, random_seed=0)
out = sim.outputs
lab = pd.DataFrame({"item": sim.annotations["item"], "label": (sim.annotations["label"]=="B").astype(int)})
for bias in (False, True):
    TemperatureScaling(bias=bias, priors="flat").fit(out, lab)  # compile once
    ours = best(lambda: [TemperatureScaling(bias=bias, priors="flat").fit(out, lab) for _ in range(20)])/20
    def ref():
        # the reference pays for its own alignment/validation too: merge + numpy NLL + L-BFGS-B
        d = out.merge(lab, on="item", validate="one_to_one")
        x = special.logit(np.clip(d["prob"].to_numpy(), 1e-6, 1-1e-6)); y = d["label"].to_numpy(float)
        def f(th):
            b = th[1] if bias else 0.0
            z = (x - b)*np.exp(-th[0]); s = special.expit(z)
            nll = np.sum(y*np.logaddexp(0,-z) + (1-y)*np.logaddexp(0,z))
            r = (s - y)  # d nll / dz
            g = [np.sum(r*(-z))] + ([np.sum(r*(-np.exp(-th[0])))] if bias else [])
            return nll, np.array(g)
        return optimize.minimize(f, np.zeros(2 if bias else 1), jac=True, method="L-BFGS-B")
    r = best(lambda: [ref() for _ in range(20)])/20
    print(f"TemperatureScaling MAP bias={bias}: ours {ours*1e3:.2f} ms, scipy {r*1e3:.2f} ms, ratio {ours/r:.2f}")

# --- PreferenceDistribution on 100,000 items
big = simulate_autorater(100_000, (1, 5), population_mean=0.4, concentration=3.0, random_seed=1)
t=time.perf_counter(); ac = validate_annotations(big.annotations); tv=time.perf_counter()-t
print(f"validate 100k items ({len(big.annotations)} rows): {tv:.2f} s, patterns: {len(np.unique(ac.counts, axis=0))}")
t=time.perf_counter(); m = PreferenceDistribution().fit(ac); print(f"MAP fit (incl. compile if cold): {time.perf_counter()-t:.2f} s")
t=time.perf_counter(); m = PreferenceDistribution().fit(ac); print(f"MAP refit: {time.perf_counter()-t:.3f} s")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    t=time.perf_counter(); n = PreferenceDistribution(random_seed=1).fit(ac, method="nuts"); t1=time.perf_counter()-t
    t=time.perf_counter(); n = PreferenceDistribution(random_seed=2).fit(ac, method="nuts"); t2=time.perf_counter()-t
print(f"NUTS 4x(1000+1000) on 100k items: first {t1:.1f} s (incl. nutpie compile), again {t2:.1f} s; diag {n.diagnostics_}")
t=time.perf_counter(); p = n.predict(); print(f"predict 100k items, 4000 draws: {time.perf_counter()-t:.2f} s")
print(n.summarize())
t=time.perf_counter(); n.idata_; print(f"idata loglik shape {n.idata_['log_likelihood']['preference'].shape}")
