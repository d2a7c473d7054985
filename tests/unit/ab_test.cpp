// `mmprof ab` without processes: the design (factors, arms, order, looks), the verdicts on
// fabricated trial records, the steady-state check on a fake clock, the content checks, the
// matrix writers, and the whole protocol driven through fake trial hooks.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>

#include "ab/analysis.hpp"
#include "ab/content_check.hpp"
#include "ab/design.hpp"
#include "ab/output.hpp"
#include "ab/runner.hpp"
#include "measure/steady_state.hpp"
#include "mmprof/error.hpp"
#include "support/test_support.hpp"
#include "util/rng.hpp"

namespace mmprof {
namespace {

ExperimentDesign design_of(std::vector<std::string> factors, int rounds = 6) {
  ExperimentSpec s;
  s.factors = std::move(factors);
  s.rounds = rounds;
  return make_design(s, 1000);
}

TEST(AbDesignTest, FirstValueIsTheBaseAndEveryOtherValueAnArm) {
  const ExperimentDesign d = design_of({"step.ms=2,6,10", "loader.num_workers=1,2"});
  ASSERT_EQ(d.arms.size(), 5u);  // base, A/A, step.ms=6, step.ms=10, loader.num_workers=2
  EXPECT_EQ(d.arms[0].id, "base");
  EXPECT_EQ(d.arms[1].id, "A/A");
  EXPECT_EQ(d.arms[1].overrides, d.arms[0].overrides);
  EXPECT_EQ(d.arms[0].overrides, (std::vector<std::string>{"step.ms=2", "loader.num_workers=1"}));
  EXPECT_EQ(d.arms[2].id, "step.ms=6");
  EXPECT_EQ(d.arms[2].overrides.back(), "step.ms=6");
  EXPECT_EQ(d.arms[4].id, "loader.num_workers=2");
  EXPECT_EQ(d.arms[2].content, ContentKind::changing);
  EXPECT_EQ(d.arms[4].content, ContentKind::preserving);
  EXPECT_EQ(content_kind("image.dct_scaling"), ContentKind::lossy);
  EXPECT_DOUBLE_EQ(d.guardrails.memory_budget_mib, 800);
}

TEST(AbDesignTest, RejectsBadSpecifications) {
  EXPECT_THROW(design_of({"step.ms"}), UsageError);
  EXPECT_THROW(design_of({"step.ms=2"}), UsageError);
  EXPECT_THROW(design_of({"step.ms=2,"}), UsageError);
  EXPECT_THROW(design_of({"step.ms=2,4", "step.ms=1,3"}), UsageError);
  EXPECT_THROW(design_of({"step.ms=2,4"}, 5), UsageError);
  EXPECT_THROW(design_of({}), UsageError);
  ExperimentSpec s;
  s.factors = {"step.ms=1,2"};
  s.cache = "lukewarm";
  EXPECT_THROW(make_design(s, 1000), UsageError);
}

// --steps is every arm's phases.steps, after the base's own --set; --duration is a job's only,
// and a trial is bounded by one of them. The design records both.
TEST(AbDesignTest, StepsBoundEveryArmAndDurationAJobsTrials) {
  ExperimentSpec s;
  s.factors = {"loader.num_workers=1,2"};
  s.sets = {"phases.steps=20"};
  s.steps = 7;
  const ExperimentDesign d = make_design(s, 1000);
  for (const Arm& arm : d.arms) {
    const auto at = std::find(arm.overrides.begin(), arm.overrides.end(), "phases.steps=7");
    ASSERT_NE(at, arm.overrides.end()) << arm.id;
    EXPECT_GT(at - std::find(arm.overrides.begin(), arm.overrides.end(), "phases.steps=20"), 0);
  }
  EXPECT_EQ(design_json(d, nlohmann::json::object(), nullptr)["steps"], 7);
  EXPECT_TRUE(design_json(d, nlohmann::json::object(), nullptr)["duration_s"].is_null());

  const auto refused = [](std::optional<int> steps, std::optional<double> duration_s, bool job,
                          const std::string& says) {
    ExperimentSpec bad;
    bad.factors = {"loader.num_workers=1,2"};
    bad.steps = steps;
    bad.duration_s = duration_s;
    if (job) bad.command = {"python3", "train.py"};
    try {
      (void)make_design(bad, 1000);
      ADD_FAILURE() << "accepted; expected: " << says;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused(0, std::nullopt, false, "--steps must be at least 1, got 0");
  refused(std::nullopt, 5.0, false, "--duration bounds a job's trials");
  refused(3, 5.0, true, "--steps and --duration both bound every trial");
  refused(std::nullopt, -1.0, true, "--duration must be in (0, 86400] seconds, got -1");
  refused(std::nullopt, 1e300, true, "--duration must be in (0, 86400] seconds, got 1e+300");
}

TEST(AbDesignTest, DeclaredPreservingOverridesTheTable) {
  ExperimentSpec s;
  s.factors = {"loader.seed=0,1"};
  s.preserving = {"loader.seed"};
  EXPECT_EQ(make_design(s, 1000).arms[2].content, ContentKind::preserving);
}

TEST(AbDesignTest, RoundOrderIsASeededPermutationPerRound) {
  const ExperimentDesign d = design_of({"step.ms=1,2,3,4,5"});
  std::set<std::vector<size_t>> seen;
  for (int r = 0; r < 6; ++r) {
    const auto order = round_order(d, r);
    EXPECT_EQ(order, round_order(d, r));
    std::vector<size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
    seen.insert(order);
  }
  EXPECT_GT(seen.size(), 1u);  // 6 rounds of 6! orders: all equal would mean no shuffling
}

TEST(AbDesignTest, LooksAndAlphaSpending) {
  const ExperimentDesign ten = design_of({"step.ms=1,2"}, 10);
  EXPECT_EQ(ten.looks, (std::vector<int>{6, 10}));
  const double first = look_alpha(ten, 6), second = look_alpha(ten, 10);
  EXPECT_NEAR(first, stats::obf_alpha_spent(0.6, 0.05), 1e-12);
  EXPECT_NEAR(first + second, 0.05, 1e-12);     // the whole alpha is spent, no more
  EXPECT_DOUBLE_EQ(look_alpha(ten, 3), first);  // before the first look: its alpha
  const ExperimentDesign six = design_of({"step.ms=1,2"}, 6);
  EXPECT_EQ(six.looks, (std::vector<int>{6}));
  EXPECT_NEAR(look_alpha(six, 6), 0.05, 1e-12);
}

TEST(AbDesignTest, ExperimentFile) {
  test::TempDir tmp;
  const auto file = tmp.path() / "exp.yaml";
  std::ofstream(file) << "factors:\n  loader.num_workers: [1, 2]\n  step.ms: [2, 6]\n"
                         "rounds: 8\nseed: 7\nset: [step.kind=sleep]\npreserving: [loader.seed]\n";
  const ExperimentSpec s = load_experiment_file(file.string());
  EXPECT_EQ(s.factors, (std::vector<std::string>{"loader.num_workers=1,2", "step.ms=2,6"}));
  EXPECT_EQ(s.rounds, 8);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.sets, (std::vector<std::string>{"step.kind=sleep"}));
  std::ofstream(file) << "factor:\n  step.ms: [2, 6]\n";
  try {
    load_experiment_file(file.string());
    FAIL() << "an unknown key was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'factor'"), std::string::npos) << e.what();
  }
}

// Trials with metric = base_rate x effect x multiplicative noise (deterministic by seed).
std::vector<TrialRecord> fabricate(const ExperimentDesign& d, const std::vector<double>& effect,
                                   double noise, uint64_t seed = 3) {
  std::vector<TrialRecord> out;
  Rng rng(seed);
  for (int r = 0; r < d.spec.rounds; ++r) {
    for (size_t arm = 0; arm < d.arms.size(); ++arm) {
      TrialRecord t;
      t.round = r;
      t.arm = arm;
      t.status = "complete";
      t.run_dir = "trials/r" + std::to_string(r);
      t.metric = 1000 * effect[arm] * (1 + rng.uniform(-noise, noise));
      t.step_p95 = t.step_p99 = t.wait_p95 = t.wait_p99 = 5;
      t.pss_peak_mib = 100;
      t.host_peak_mib = 500;
      t.steady = true;
      t.digests[{"pipeline", 0}] = 42;
      out.push_back(t);
    }
  }
  return out;
}

const ArmResult& result(const Analysis& a, size_t arm) {
  return a.arms.at(arm - 1);
}

TEST(AbAnalysisTest, VerdictsFollowTheEffectAndTheBand) {
  const ExperimentDesign d = design_of({"step.ms=2,6,3,4"}, 8);
  // base, A/A, +20 %, -20 %, +0.1 %
  const auto trials = fabricate(d, {1, 1, 1.2, 0.8, 1.001}, 0.002);
  const Analysis a = analyze(d, trials, {}, 0.05);
  EXPECT_DOUBLE_EQ(a.calibration.tau, d.tau_floor);  // A/A noise is far below the 2 % floor
  EXPECT_EQ(result(a, 2).verdict, "ADOPT") << result(a, 2).reason;
  EXPECT_NEAR(log_to_pct(result(a, 2).t.mean), 20, 1);
  EXPECT_EQ(result(a, 3).verdict, "REJECT") << result(a, 3).reason;
  EXPECT_EQ(result(a, 4).verdict, "EQUIVALENT") << result(a, 4).reason;
  EXPECT_NE(result(a, 1).verdict, "ADOPT");
  EXPECT_EQ(result(a, 2).n, 8u);
  EXPECT_TRUE(result(a, 2).wilcoxon.exact);
  EXPECT_LT(result(a, 2).bootstrap.lo, result(a, 2).t.mean);
}

TEST(AbAnalysisTest, NoisyOrShortExperimentsAreInconclusive) {
  const ExperimentDesign d = design_of({"step.ms=2,6"}, 6);
  const auto noisy = fabricate(d, {1, 1, 1.02}, 0.3);
  EXPECT_EQ(result(analyze(d, noisy, {}, 0.05), 2).verdict, "INCONCLUSIVE");
  std::vector<TrialRecord> short_run(noisy.begin(), noisy.begin() + 9);  // 3 rounds
  const Analysis a = analyze(d, short_run, {}, 0.05);
  EXPECT_EQ(result(a, 2).verdict, "INCONCLUSIVE");
  EXPECT_NE(result(a, 2).reason.find("only 3 paired rounds"), std::string::npos);
}

TEST(AbAnalysisTest, DigestMismatchOrFailedTrialIsInvalid) {
  const ExperimentDesign d = design_of({"loader.num_workers=1,2", "step.ms=1,2"}, 6);
  auto trials = fabricate(d, {1, 1, 1.5, 1.5}, 0.001);
  trials[2 * 4 + 2].digests[{"pipeline", 0}] = 43;  // round 2, arm loader.num_workers=2
  trials[5 * 4 + 3].status = "failed";              // round 5, arm step.ms=2
  trials[5 * 4 + 3].exit_code = 1;
  const Analysis a = analyze(d, trials, {}, 0.05);
  EXPECT_EQ(result(a, 2).verdict, "INVALID");
  EXPECT_EQ(result(a, 2).correctness.ok, false);
  EXPECT_NE(result(a, 2).reason.find("round 2 phase pipeline batch 0"), std::string::npos)
      << result(a, 2).reason;
  EXPECT_EQ(result(a, 3).verdict, "INVALID");
  EXPECT_EQ(result(a, 3).correctness.kind, "none");  // step.ms changes content by design
  EXPECT_EQ(result(a, 1).correctness.ok, true);      // A/A: the base's digests
}

// Issue 32 case 6: a video factor whose trials measured no video reported +6 % and "PSNR inf".
// A factor of one modality is tested only on trials whose measured steps held that modality.
TEST(AbAnalysisTest, AFactorOfAModalityTheTrialNeverMeasuredIsNotExercised) {
  TrialRecord images_only;
  images_only.measured_by_modality = {{"image", 40}};
  EXPECT_EQ(unexercised_factor("video.decode_device", images_only),
            "its measured steps held 0 videos, so video.decode_device was never exercised: a "
            "factor of videos shows its effect only on data with videos in the measured steps");
  EXPECT_EQ(unexercised_factor("image.dct_scaling", images_only), "");
  EXPECT_EQ(unexercised_factor("loader.num_workers", images_only), "");  // both modalities
  EXPECT_EQ(unexercised_factor("decode.device", images_only), "");
  TrialRecord mixed;
  mixed.measured_by_modality = {{"image", 30}, {"video", 2}};
  EXPECT_EQ(unexercised_factor("video.decode_device", mixed), "");
  TrialRecord videos_only;
  videos_only.measured_by_modality = {{"video", 8}};
  EXPECT_NE(unexercised_factor("image.size", videos_only).find("held 0 images"), std::string::npos);
  EXPECT_EQ(unexercised_factor("video.decode_device", TrialRecord{}), "");  // a job: no rows

  // The arm's trials carry it as their invalid reason: the arm is INVALID, whatever its speed.
  const ExperimentDesign d = design_of({"video.decode_device=cpu,gpu"}, 6);
  auto trials = fabricate(d, {1, 1, 1.06}, 0.001);
  for (auto& t : trials)
    if (t.arm == 2) t.invalid = unexercised_factor("video.decode_device", images_only);
  const Analysis a = analyze(d, trials, {}, 0.05);
  EXPECT_EQ(result(a, 2).verdict, "INVALID");
  EXPECT_NE(result(a, 2).reason.find("held 0 videos"), std::string::npos) << result(a, 2).reason;
}

// Issue 32 case 2: in all 6 staged trials of a --cache cold ab the whole dataset was resident
// when measurement began, and the report still said "cold cache".
TEST(AbAnalysisTest, AColdExperimentSaysWhetherItsTrialsMeasuredACold) {
  ExperimentDesign d = design_of({"loader.num_workers=1,2"});
  std::vector<TrialRecord> trials(6);
  for (size_t i = 0; i < trials.size(); ++i) {
    trials[i].status = "complete";
    trials[i].metric = 100;
    trials[i].resident_at_window = i < 4 ? 1.0 : 0.02;
  }
  trials.push_back(trials[0]);
  trials.back().status = "failed";                    // no result: its reading is not counted
  EXPECT_TRUE(cache_at_window(d, trials).is_null());  // a warm experiment claims no cold cache
  d.cache = CacheRegime::cold;
  const nlohmann::json warm = cache_at_window(d, trials);
  EXPECT_EQ(warm["warm_trials"], 4);
  EXPECT_EQ(warm["trials"], 6);
  EXPECT_EQ(warm["cold_in_fact"], false);
  EXPECT_DOUBLE_EQ(warm["median_resident"].get<double>(), 1.0);
  EXPECT_EQ(warm["text"].get<std::string>().rfind(
                "cold asked, but 4 of the 6 trials began measuring with at least 50 % of the "
                "dataset in the page cache (median 100 %)",
                0),
            0u)
      << warm["text"];
  for (auto& t : trials)
    t.resident_at_window = 0.01;
  trials[0].resident_at_window = NAN;  // a trial that measured no residency is left out
  const nlohmann::json cold = cache_at_window(d, trials);
  EXPECT_EQ(cold["trials"], 5);
  EXPECT_EQ(cold["cold_in_fact"], true);
  EXPECT_EQ(cold["text"],
            "cold: every trial's measured window began with less than 50 % of the dataset in the "
            "page cache (median 1 %)");
  for (auto& t : trials)
    t.resident_at_window = NAN;  // a remote dataset: nothing local to measure
  EXPECT_TRUE(cache_at_window(d, trials).is_null());
}

TEST(AbAnalysisTest, LossyArmsAreJudgedByPsnr) {
  const ExperimentDesign d = design_of({"image.dct_scaling=true,false"}, 6);
  const auto trials = fabricate(d, {1, 1, 1.3}, 0.001);
  EXPECT_EQ(result(analyze(d, trials, {{2, 35.0}}, 0.05), 2).verdict, "ADOPT");
  const ArmResult low = result(analyze(d, trials, {{2, 20.0}}, 0.05), 2);
  EXPECT_EQ(low.verdict, "INVALID");
  EXPECT_NE(low.reason.find("PSNR 20.0 dB"), std::string::npos) << low.reason;
}

// A job over an IterableDataset (LitData, Streaming, WebDataset): each worker reads its own part,
// so another num_workers delivers other batches. That is the factor's nature there, not a failed
// content check: the arm is judged on its throughput as a content-changing one, and says why.
TEST(AbAnalysisTest, WorkersOverAnIterableDatasetChangeContentInsteadOfFailingIt) {
  const ExperimentDesign d = design_of({"loader.num_workers=2,3", "loader.prefetch_factor=2,4"}, 6);
  auto trials = fabricate(d, {1, 1, 1.2, 1.0}, 0.001);
  for (auto& t : trials) {
    t.iterable_dataset = "Images, a litdata StreamingDataset";
    if (t.arm == 2) t.digests[{"pipeline", 0}] = 43;  // other batches with 3 workers
  }
  const Analysis a = analyze(d, trials, {}, 0.05);
  const ArmResult& workers = result(a, 2);
  EXPECT_EQ(workers.verdict, "ADOPT") << workers.reason;
  EXPECT_EQ(workers.content, ContentKind::changing);
  EXPECT_FALSE(workers.correctness.ok.has_value());
  EXPECT_NE(workers.correctness.detail.find("iterates an IterableDataset (Images, a litdata "
                                            "StreamingDataset)"),
            std::string::npos)
      << workers.correctness.detail;
  EXPECT_EQ(to_json(workers, d)["content"], "changing");
  // prefetch_factor reorders nothing: still checked by digest, and identical.
  EXPECT_EQ(result(a, 3).content, ContentKind::preserving);
  EXPECT_EQ(result(a, 3).correctness.ok, true);
  // A map-style job's workers keep the batches: a mismatch is still INVALID.
  for (auto& t : trials)
    t.iterable_dataset.clear();
  EXPECT_EQ(result(analyze(d, trials, {}, 0.05), 2).verdict, "INVALID");
}

TEST(AbAnalysisTest, GuardrailViolationRejects) {
  const ExperimentDesign d = design_of({"loader.num_workers=1,2"}, 6);
  auto trials = fabricate(d, {1, 1, 1.3}, 0.001);
  for (auto& t : trials)
    if (t.arm == 2) t.pss_peak_mib = 400;  // 4x the PSS for 1.3x the samples/s: 3.1x per unit
  const ArmResult r = result(analyze(d, trials, {}, 0.05), 2);
  EXPECT_EQ(r.verdict, "REJECT");
  EXPECT_NE(r.reason.find("pss_mb_per_samples_per_s"), std::string::npos) << r.reason;
}

const GuardrailCheck* guardrail(const ArmResult& r, const std::string& name) {
  for (const auto& g : r.guardrails)
    if (g.name == name) return &g;
  return nullptr;
}

// A second worker brings its own memory: 1.6x the PSS for 1.6x the samples/s is no regression
// (it was REJECTed against a raw 1.5x growth limit). The host's memory, which other processes
// move, is context. A peak over the budget (80 % of the host's 1000 MB) is a hard REJECT.
TEST(AbAnalysisTest, MemoryIsJudgedPerUnitOfThroughputAndAgainstTheBudget) {
  const ExperimentDesign d = design_of({"loader.num_workers=1,2"}, 6);
  ASSERT_DOUBLE_EQ(d.guardrails.memory_budget_mib, 800);
  auto trials = fabricate(d, {1, 1, 1.6}, 0.001);
  for (auto& t : trials) {
    if (t.arm == 2) t.pss_peak_mib = 160;
    t.host_peak_mib = t.arm == 2 ? 5000 : 500;  // another process filled the host meanwhile
  }
  const ArmResult ok = result(analyze(d, trials, {}, 0.05), 2);
  EXPECT_EQ(ok.verdict, "ADOPT") << ok.reason;
  const GuardrailCheck* per_rate = guardrail(ok, "pss_mb_per_samples_per_s");
  ASSERT_NE(per_rate, nullptr);
  EXPECT_TRUE(per_rate->ok);
  EXPECT_NEAR(per_rate->arm, 160.0 / 1600, 1e-3);  // MB per samples/s, as the base's 100 / 1000
  const GuardrailCheck* budget = guardrail(ok, "pss_peak_mib");
  ASSERT_NE(budget, nullptr);
  EXPECT_DOUBLE_EQ(budget->limit, 800);
  EXPECT_DOUBLE_EQ(budget->arm, 160);
  EXPECT_EQ(guardrail(ok, "host_peak_mib"), nullptr);
  EXPECT_DOUBLE_EQ(ok.host_peak_mib, 5000);
  EXPECT_DOUBLE_EQ(ok.base_host_peak_mib, 500);
  trials[2 * 3 + 2].pss_peak_mib = 900;  // round 2 of the arm peaks over the budget
  const ArmResult over = result(analyze(d, trials, {}, 0.05), 2);
  EXPECT_EQ(over.verdict, "REJECT");
  EXPECT_NE(
      over.reason.find("guardrail pss_peak_mib is violated: 900.00 against a limit of 800.00"),
      std::string::npos)
      << over.reason;
}

TEST(AbAnalysisTest, MaterialDriftDowngrades) {
  const ExperimentDesign d = design_of({"step.ms=2,6"}, 8);
  auto trials = fabricate(d, {1, 1, 1.3}, 0.001);
  for (auto& t : trials)
    if (t.arm == 2) *t.metric *= 1 + 0.05 * t.round;  // the effect grows by 5 % per round
  const ArmResult r = result(analyze(d, trials, {}, 0.05), 2);
  EXPECT_TRUE(r.drift.drift);
  EXPECT_EQ(r.verdict, "INCONCLUSIVE");
  EXPECT_NE(r.reason.find("would be ADOPT"), std::string::npos) << r.reason;
}

// Throughput from trials that never settled measures warm-up: a verdict resting on mostly such
// trials of the arm or of the base is withheld, the way drift withholds it; a minority is counted.
TEST(AbAnalysisTest, MostlyNonSteadyTrialsWithholdTheVerdict) {
  const ExperimentDesign d = design_of({"step.ms=2,6"}, 6);
  auto trials = fabricate(d, {1, 1, 1.3}, 0.001);
  for (auto& t : trials)
    t.steady = false;  // all 18 trials
  const ArmResult all = result(analyze(d, trials, {}, 0.05), 2);
  EXPECT_EQ(all.verdict, "INCONCLUSIVE");
  EXPECT_EQ(all.reason,
            "would be ADOPT, but 6 of 6 trials of this arm and 6 of 6 of the base never reached "
            "steady state");
  EXPECT_EQ(test::verdict_before_drift(to_json(all, d)), "ADOPT");
  for (auto& t : trials)
    t.steady = t.arm != 0 || t.round < 2;  // the base: 4 of 6 never settled
  const ArmResult base = result(analyze(d, trials, {}, 0.05), 2);
  EXPECT_EQ(base.reason,
            "would be ADOPT, but 4 of 6 trials of the base never reached steady state");
  for (auto& t : trials)
    t.steady = !(t.arm == 2 && t.round < 3);  // 3 of 6: not most of them
  const ArmResult half = result(analyze(d, trials, {}, 0.05), 2);
  EXPECT_EQ(half.verdict, "ADOPT") << half.reason;
  EXPECT_EQ(half.nonsteady, 3);
  EXPECT_EQ(half.steady, 3);
  EXPECT_EQ(half.base_nonsteady, 0);
  // A REJECT by a tail measured in those same trials is withheld too; the memory budget, a hard
  // limit, is not (though PSS per samples/s, a paired check, fails as well).
  for (auto& t : trials) {
    t.steady = false;
    if (t.arm == 2) t.step_p99 = 50;  // 10x the base's step p99
  }
  const ArmResult tail = result(analyze(d, trials, {}, 0.05), 2);
  EXPECT_EQ(tail.verdict, "INCONCLUSIVE");
  EXPECT_EQ(tail.reason.rfind("would be REJECT, but 6 of 6 trials of this arm", 0), 0u)
      << tail.reason;
  for (auto& t : trials)
    if (t.arm == 2) t.pss_peak_mib = 900;  // over the 800 MB budget
  const ArmResult budget = result(analyze(d, trials, {}, 0.05), 2);
  EXPECT_EQ(budget.verdict, "REJECT");
  EXPECT_NE(budget.reason.find("guardrail pss_peak_mib is violated"), std::string::npos)
      << budget.reason;
}

TEST(AbSteadyStateTest, JudgesBlocksAndExtendsOnce) {
  SteadyCriteria c;
  c.blocks = 5;
  c.block_steps = 2;
  EXPECT_TRUE(judge_blocks({100, 101, 99, 100, 100.5}, c).steady);
  EXPECT_FALSE(judge_blocks({100, 101, 102, 103, 104}, c).steady);  // monotone: p = 2/120
  EXPECT_FALSE(judge_blocks({50, 150, 50, 150, 50}, c).steady);     // CV far above 0.10
  // Fake clock: steps get faster for the first 10 steps (one check), then steady.
  int64_t now = 0;
  int steps = 0;
  const auto step = [&] { now += steps++ < 10 ? 1'000'000 * (20 - steps) : 1'000'000; };
  const SteadyState s = settle(c, step, [&] { return now; });
  EXPECT_TRUE(s.steady);
  EXPECT_TRUE(s.extended);
  EXPECT_EQ(steps, 20);
  ASSERT_EQ(s.attempts.size(), 2u);
  EXPECT_NEAR(s.attempts[1][0], 1000.0, 1e-9);  // 2 steps in 2 ms
}

TEST(AbContentTest, DigestComparisonAndPsnr) {
  DigestMap base = {{{"pipeline", 0}, 1}, {{"pipeline", 1}, 2}, {{"pipeline", 2}, 3}};
  DigestMap arm = {{{"pipeline", 1}, 2}, {{"pipeline", 2}, 9}, {{"pipeline", 3}, 4}};
  const DigestComparison c = compare_digests(base, arm);
  EXPECT_EQ(c.compared, 2u);
  EXPECT_EQ(c.mismatched, 1u);
  EXPECT_EQ(c.first_mismatch, "phase pipeline batch 2");
  const uint8_t a[] = {0, 0}, b[] = {0, 255};
  EXPECT_NEAR(psnr_u8(a, b, 2), 10 * std::log10(2.0), 1e-12);  // MSE = 255^2 / 2
  EXPECT_TRUE(std::isinf(psnr_u8(a, a, 2)));
}

// The protocol with fake trials: each "process" writes the files a baseline would.
struct FakeWorld {
  std::map<std::string, double> rate;  // by the last --set that names a factor
  int runs = 0;
  int interrupt_after = -1;
  std::optional<bool> steady;     // written to steady.json when set
  std::set<std::string> failing;  // a trial given one of these --set values exits 1
  int failed_runs = 0;
  bool crashes = false;  // every trial writes its figures, then exits 1 (a job that crashes late)

  int run(const std::vector<std::string>& argv, const std::filesystem::path& log) {
    std::filesystem::path out;
    double metric = 1000;
    bool fails = false;
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--out") out = argv[i + 1];
      if (argv[i] == "--set" && rate.count(argv[i + 1]) != 0) metric = rate[argv[i + 1]];
      fails = fails || (argv[i] == "--set" && failing.count(argv[i + 1]) != 0);
    }
    if (fails) {
      ++runs;
      ++failed_runs;
      return 1;
    }
    std::filesystem::create_directories(out);
    std::ofstream(log) << "fake\n";
    metric *= 1 + 0.001 * (runs % 3);
    const nlohmann::json summary = {
        {"schema", "mmprof.summary/2"},
        {"throughput", {{"pipeline", {{"samples_per_s", metric}}}}},
        {"memory", {{"total_pss_peak_mib", 100}, {"host_peak_mib", 300}}},
        {"errors", {{"count", 0}}}};
    std::ofstream(out / "manifest.json") << R"({"schema": "mmprof.manifest/2"})";
    std::ofstream(out / "summary.json") << summary.dump();
    std::ofstream(out / "steps.csv") << "step,phase,t_start_ns,wait_ms,h2d_ms,compute_ms,step_ms,"
                                        "samples,bytes\n0,pipeline,1,0.5,,0,2.0,8,100\n";
    std::ofstream(out / "digests.csv")
        << "phase,batch_id,epoch,digest\npipeline,0,0,00000000000000ff\n";
    if (steady) {
      std::ofstream(out / "steady.json")
          << nlohmann::json{{"pipeline", {{"steady", *steady}, {"extended", true}}}}.dump();
    }
    if (crashes) {
      ++runs;
      ++failed_runs;
      return 1;
    }
    return ++runs == interrupt_after ? 130 : 0;
  }
};

TEST(AbProtocolTest, RunsEveryArmEveryRoundAndWritesTheDirectory) {
  test::TempDir tmp;
  const ExperimentDesign d = design_of({"loader.num_workers=1,2"}, 6);
  FakeWorld world;
  world.rate["loader.num_workers=2"] = 1500;
  AbOptions o;
  o.out = tmp.path() / "exp";
  o.self = "/bin/false";
  o.arm_configs.assign(d.arms.size(), Config{});
  int64_t clock = 0;
  int primed = 0;  // trials told the declared cache regime (warm), before the arm's own keys
  TrialHooks hooks{[&](const auto& argv, const auto& log) {
                     const auto set = std::find(argv.begin(), argv.end(), "--set");
                     primed += set != argv.end() && set[1] == "data.cache=warm";
                     return world.run(argv, log);
                   },
                   [&] { return clock += 1'000'000'000; },
                   [] { return std::string("2026-01-01T00:00:00Z"); }};
  const auto e = run_ab(d, o, {}, hooks);
  EXPECT_EQ(e["status"], "complete");
  EXPECT_EQ(world.runs, 18);  // 6 rounds x (base, A/A, one arm)
  EXPECT_EQ(primed, 18);
  ASSERT_EQ(e["order"].size(), 6u);
  EXPECT_EQ(e["trials"].size(), 18u);
  EXPECT_EQ(e["design"]["metric"]["key"], "throughput.pipeline.samples_per_s");
  const auto& arm = e["results"][1];
  EXPECT_EQ(arm["arm"], "loader.num_workers=2");
  EXPECT_EQ(arm["verdict"], "ADOPT") << arm["reason"];
  EXPECT_EQ(arm["correctness"]["ok"], true);
  EXPECT_EQ(e["trials"][0]["wall_s"], 1.0);
  // The tables agree with experiment.json: one row per arm, the verdicts in place.
  std::ifstream csv(o.out / "matrix.csv");
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(csv, line))
    lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("arm,factor,value,role", 0), 0u);
  EXPECT_NE(lines[3].find(",ADOPT,"), std::string::npos) << lines[3];
  EXPECT_TRUE(std::filesystem::exists(o.out / "matrix.md"));
}

// Options for `d`'s fake trials into `out`, every arm on the default configuration.
AbOptions fake_options(const ExperimentDesign& d, const std::filesystem::path& out) {
  AbOptions o;
  o.out = out;
  o.arm_configs.assign(d.arms.size(), Config{});
  return o;
}

// Hooks running `world`'s fake trials (each argv also into `argvs` when given) on a clock that
// advances 1 us per reading from `clock`.
TrialHooks fake_hooks(FakeWorld& world, int64_t& clock,
                      std::vector<std::vector<std::string>>* argvs = nullptr) {
  return {[&world, argvs](const auto& argv, const auto& log) {
            if (argvs != nullptr) argvs->push_back(argv);
            return world.run(argv, log);
          },
          [&clock] { return clock += 1000; }, [] { return std::string("t"); }};
}

// The experiment `d` with `world`'s fake trials into `out`.
nlohmann::json run_fake(const ExperimentDesign& d, FakeWorld& world,
                        const std::filesystem::path& out) {
  int64_t clock = 0;
  return run_ab(d, fake_options(d, out), {}, fake_hooks(world, clock));
}

// Round by round (what `tune` drives): after each round experiment.json on disk holds that many
// rounds and says running; the last round ends it as run_ab does, and no round runs after it.
TEST(AbProtocolTest, AnExperimentRunsRoundByRoundAsRunAbDoes) {
  test::TempDir tmp;
  const ExperimentDesign d = design_of({"loader.num_workers=1,2"}, 6);
  FakeWorld world;
  world.rate["loader.num_workers=2"] = 1500;
  const AbOptions o = fake_options(d, tmp.path() / "exp");
  int64_t clock = 0;
  const TrialHooks hooks = fake_hooks(world, clock);
  ExperimentRun run(d, o, {}, hooks);
  run.start();
  EXPECT_EQ(run.rounds_done(), 0);
  EXPECT_EQ(test::read_json(o.out / "experiment.json")["status"], "running");
  for (int r = 1; r < 6; ++r) {
    ASSERT_TRUE(run.next_round()) << r;
    EXPECT_EQ(run.rounds_done(), r);
    const nlohmann::json on_disk = test::read_json(o.out / "experiment.json");
    EXPECT_EQ(on_disk["status"], "running");
    EXPECT_EQ(on_disk["order"].size(), static_cast<size_t>(r));
    EXPECT_EQ(on_disk["trials"].size(), static_cast<size_t>(3 * r));
  }
  EXPECT_FALSE(run.next_round());
  EXPECT_EQ(run.rounds_done(), 6);
  EXPECT_EQ(run.document()["status"], "complete");
  EXPECT_EQ(run.document()["results"][1]["verdict"], "ADOPT");
  EXPECT_FALSE(run.next_round());  // ended: nothing more runs
  EXPECT_EQ(world.runs, 18);
  FakeWorld again;
  again.rate["loader.num_workers=2"] = 1500;
  const nlohmann::json whole = run_fake(d, again, tmp.path() / "exp2");
  EXPECT_EQ(whole["results"], run.document()["results"]);
  EXPECT_EQ(whole["trials"].size(), run.document()["trials"].size());
}

// A job's trial is `mmprof baseline --duration S` when the experiment is bounded by seconds, and
// `--steps N` (phases.steps of the arm) otherwise.
TEST(AbProtocolTest, AJobsTrialsAreBoundedByDurationOrSteps) {
  for (const bool by_duration : {true, false}) {
    test::TempDir tmp;
    ExperimentSpec s;
    s.factors = {"loader.num_workers=1,2"};
    s.command = {"python3", "train.py"};
    if (by_duration) s.duration_s = 2.5;
    const ExperimentDesign d = make_design(s, 1000);
    FakeWorld world;
    std::vector<std::vector<std::string>> argvs;
    AbOptions o = fake_options(d, tmp.path() / "exp");
    for (Config& c : o.arm_configs)
      c.phases.steps = 33;
    int64_t clock = 0;
    const TrialHooks hooks = fake_hooks(world, clock, &argvs);
    try {  // the fake trials measure no job (no end-to-end rate): the base's first trial ends it
      (void)run_ab(d, o, {}, hooks);
    } catch (const Error&) {
    }
    ASSERT_FALSE(argvs.empty());
    for (const auto& argv : argvs) {
      const auto has = [&](const std::string& a, const std::string& b) {
        const auto at = std::find(argv.begin(), argv.end(), a);
        return at != argv.end() && at + 1 != argv.end() && at[1] == b;
      };
      EXPECT_EQ(has("--duration", "2.5"), by_duration);
      EXPECT_EQ(has("--steps", "33"), !by_duration);
    }
  }
}

// Every trial failed its steady-state check: the verdict is withheld, and matrix.md says how many.
TEST(AbProtocolTest, NonSteadyTrialsAreCarriedIntoTheVerdictAndTheMatrix) {
  test::TempDir tmp;
  const ExperimentDesign d = design_of({"loader.num_workers=1,2"}, 6);
  FakeWorld world;
  world.rate["loader.num_workers=2"] = 1500;
  world.steady = false;
  const auto e = run_fake(d, world, tmp.path() / "exp");
  const auto& arm = e["results"][1];
  EXPECT_EQ(arm["verdict"], "INCONCLUSIVE");
  EXPECT_EQ(arm["reason"],
            "would be ADOPT, but 6 of 6 trials of this arm and 6 of 6 of the base never reached "
            "steady state");
  EXPECT_EQ(arm["base_nonsteady_trials"], 6);
  std::ifstream md(tmp.path() / "exp" / "matrix.md");
  const std::string text{std::istreambuf_iterator<char>(md), std::istreambuf_iterator<char>()};
  EXPECT_NE(text.find("never reached steady state (the check failed twice): base 6 of 6, A/A 6 "
                      "of 6, loader.num_workers=2 6 of 6."),
            std::string::npos)
      << text;
}

TEST(AbProtocolTest, ATrialInterruptedAloneIsRecordedAndTheRoundsGoOn) {
  test::TempDir tmp;
  const ExperimentDesign d = design_of({"loader.num_workers=1,2"}, 6);
  FakeWorld world;
  world.interrupt_after = 5;
  // The child reports the interrupt (exit 130); this process's flag is not set in a unit test,
  // so the experiment records the trial as interrupted and goes on.
  const auto e = run_fake(d, world, tmp.path() / "exp");
  EXPECT_EQ(e["trials"][4]["status"], "interrupted");
  EXPECT_EQ(e["trials"].size(), 18u);
  std::ifstream in(tmp.path() / "exp" / "experiment.json");
  EXPECT_EQ(nlohmann::json::parse(in)["trials"].size(), 18u);
}

// An arm whose first trial failed is INVALID whatever follows: later rounds do not run it, and an
// experiment whose factor arms are all INVALID stops after the round that showed it.
TEST(AbProtocolTest, AnInvalidArmIsNotRunAgainAndNothingLeftStopsTheExperiment) {
  test::TempDir tmp;
  FakeWorld world;
  world.rate["loader.num_workers=2"] = 1500;
  world.failing = {"loader.seed=1"};
  const auto e = run_fake(design_of({"loader.num_workers=1,2", "loader.seed=0,1"}, 6), world,
                          tmp.path() / "exp");
  EXPECT_EQ(e["status"], "complete");
  EXPECT_EQ(world.runs, 4 + 5 * 3);  // round 1 runs all four arms, rounds 2-6 three
  EXPECT_EQ(world.failed_runs, 1);
  EXPECT_EQ(e["order"][0].size(), 4u);
  EXPECT_EQ(e["order"][1].size(), 3u);
  EXPECT_EQ(e["results"][1]["verdict"], "ADOPT");
  EXPECT_EQ(e["results"][2]["verdict"], "INVALID");

  FakeWorld alone;
  alone.failing = {"loader.seed=1"};
  const auto f = run_fake(design_of({"loader.seed=0,1"}, 6), alone, tmp.path() / "exp2");
  EXPECT_EQ(alone.runs, 3);  // base, A/A and the failing arm, once
  EXPECT_EQ(f["status"], "stopped_early");
  EXPECT_EQ(f["message"],
            "every factor arm was INVALID after round 1 of 6: nothing is left to compare");
  EXPECT_EQ(f["results"][1]["verdict"], "INVALID");
}

// A job that crashes in every trial after measuring: no failed trial shows a throughput, and the
// base's failure ends the experiment as failed (exit 1), with what ran kept on disk.
TEST(AbProtocolTest, AFailingBaseEndsTheExperimentAsFailed) {
  test::TempDir tmp;
  FakeWorld world;
  world.crashes = true;
  const ExperimentDesign d = design_of({"loader.num_workers=1,2"}, 6);
  try {
    run_fake(d, world, tmp.path() / "exp");
    FAIL() << "a failing base ended as a result";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::failure);
    EXPECT_NE(std::string(e.what()).find("the base's trial trials/r00-base exited with status 1"),
              std::string::npos)
        << e.what();
  }
  const auto e = test::read_json(tmp.path() / "exp" / "experiment.json");
  EXPECT_EQ(e["status"], "failed");
  const auto& trials = e["trials"];
  ASSERT_FALSE(trials.empty());
  EXPECT_EQ(trials.back()["arm"], "base");  // nothing ran after the base failed
  EXPECT_EQ(static_cast<int>(trials.size()), world.runs);
  for (const auto& t : trials) {
    EXPECT_EQ(t["status"], "failed");
    EXPECT_TRUE(t["metric"].is_null()) << t.dump();
  }
  const std::string md = test::read_text(tmp.path() / "exp" / "matrix.md");
  EXPECT_EQ(md.find("1000.0"), std::string::npos) << md;
}

// Issue 33 item 4: what decides an INCONCLUSIVE arm. Intervals narrow as 1/sqrt(n) in log space.
TEST(AbOutputTest, AnUndecidedArmSaysWhatWouldDecideIt) {
  // +10 % with [+1, +20] over 10 rounds, band 3 %: the lower bound must clear +3 %.
  const std::string more = inconclusive_next(10, 1, 20, 3, 10);
  const double lo = std::log1p(0.01), hi = std::log1p(0.20), tau = std::log1p(0.03);
  const double half = (hi - lo) / 2, margin = (lo + hi) / 2 - tau;
  const auto rounds = static_cast<int>(std::ceil(10 * (half / margin) * (half / margin)));
  EXPECT_EQ(more, fmt::format("about {} rounds in all (--rounds {}) would decide it if the "
                              "estimate (+10.0 %) holds",
                              rounds, rounds));
  // +1 % inside a 3 % band: no more rounds can show an effect of that size.
  EXPECT_NE(inconclusive_next(1, -4, 6, 3, 10).find("lies inside the ±3.0 % band"),
            std::string::npos);
  // +8 % against a 3 % band with an interval of -20 .. +40 % over 6 rounds: about 650 needed.
  EXPECT_NE(inconclusive_next(8, -20, 40, 3, 6).find("this machine is too noisy"),
            std::string::npos);
}

}  // namespace
}  // namespace mmprof
