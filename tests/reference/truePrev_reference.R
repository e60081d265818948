# Reference posteriors for bayesjudge.MisclassificationModel from R's
# prevalence::truePrev (JAGS Gibbs sampler), regenerated with
#
#     Rscript tests/reference/truePrev_reference.R > tests/reference/truePrev_reference.csv
#
# (Debian: apt-get install r-cran-prevalence; R 4.2.2, prevalence 0.4.1, rjags 4-13, JAGS 4.3.1).
#
# Mapping. truePrev models x ~ Bin(n, AP), AP = SE * TP + (1 - SP) * (1 - TP),
# TP ~ Beta(prior), with SE and SP given *prior distributions* rather than data.
# bayesjudge's model has the calibration counts as likelihoods,
# tp ~ Bin(m1, q1), tn ~ Bin(m0, q0), with Beta(1, 1) priors. Because the
# calibration data touch only (q0, q1), Beta(1, 1) x Bin(tp | m1, q1) is
# proportional to the Beta(tp + 1, m1 - tp + 1) density, so the two joint
# posteriors are identical when
#
#     TP (true prevalence)  <-> accuracy    theta
#     SE (sensitivity)      <-> sensitivity q1 ~ Beta(tp + 1, m1 - tp + 1)
#     SP (specificity)      <-> specificity q0 ~ Beta(tn + 1, m0 - tn + 1)
#     AP (apparent prev.)   <-> judged_rate p,   x = judged_pos
#
# Neither model restricts q0 + q1 > 1. Output columns: one row per case and
# parameter (accuracy = TP, sensitivity = SE, specificity = SP) with the
# posterior mean, sd, median and 2.5% / 97.5% quantiles of 4 x 50,000 draws.

suppressPackageStartupMessages(library(prevalence))

cases <- data.frame(
  case = c("paper_q07_q09", "small_calibration", "high_accuracy", "weak_judge"),
  judged_pos = c(480L, 60L, 930L, 300L),
  n = c(1000L, 200L, 1000L, 500L),
  tp = c(90L, 18L, 95L, 35L),
  m1 = c(100L, 20L, 100L, 50L),
  tn = c(70L, 16L, 45L, 30L),
  m0 = c(100L, 20L, 50L, 50L)
)

# truePrev passes no inits to JAGS, so JAGS seeds its RNG itself and set.seed()
# does not make a rerun identical: reruns differ at the Monte Carlo level
# (about 0.001 in means, 0.005 in 2.5% / 97.5% quantiles; 4 x 50,000 draws).
rows <- list()
for (i in seq_len(nrow(cases))) {
  cs <- cases[i, ]
  se <- as.formula(sprintf("~dbeta(%d, %d)", cs$tp + 1L, cs$m1 - cs$tp + 1L))
  sp <- as.formula(sprintf("~dbeta(%d, %d)", cs$tn + 1L, cs$m0 - cs$tn + 1L))
  fit <- truePrev(cs$judged_pos, cs$n, SE = se, SP = sp, prior = c(1, 1),
                  nchains = 4, burnin = 5000, update = 50000)
  for (node in c("TP", "SE", "SP")) {
    draws <- unlist(lapply(fit@mcmc[[node]], as.numeric))
    q <- quantile(draws, c(0.025, 0.5, 0.975), names = FALSE)
    rows[[length(rows) + 1]] <- data.frame(
      case = cs$case, judged_pos = cs$judged_pos, n = cs$n, tp = cs$tp, m1 = cs$m1,
      tn = cs$tn, m0 = cs$m0,
      parameter = c(TP = "accuracy", SE = "sensitivity", SP = "specificity")[[node]],
      mean = mean(draws), sd = sd(draws), median = q[2], lower = q[1], upper = q[3],
      n_draws = length(draws)
    )
  }
}
out <- do.call(rbind, rows)
num <- c("mean", "sd", "median", "lower", "upper")
out[num] <- lapply(out[num], signif, digits = 6)
write.csv(out, stdout(), row.names = FALSE, quote = FALSE)
