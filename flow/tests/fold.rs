//! Batch-norm folding (`fptgen_generator::fold`): a folded layer computes the
//! same codes as the layer and the batch norm it replaces, for every input;
//! batch norms that cannot fold exactly stay; and the generated hardware of
//! a network with a folded and a kept batch norm is bit-exact, cycle for
//! cycle, against the unfolded simulator in Verilator.

use fptgen_flow::cosim;
use fptgen_generator::design::write_design;
use fptgen_generator::fold::fold;
use fptgen_sim::model::{self, Model};
use fptgen_sim::network::Network;
use fptgen_sim::weights::{self, Params};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A dense or conv layer with a wide linear output, then a batch norm:
/// foldable for any weights. `first`: the layer's type and shape fields.
fn foldable(first: &str, input: &str) -> String {
    format!(
        "name: f\ninput:\n  shape: {input}\n  format: 'ap_fixed<4,2>'\nweights: w.npz\nlayers:\n\
         {first}\
         \x20   activation: linear\n\
         \x20   precision: {{weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,3>', accum: 'ap_fixed<24,12>', output: 'ap_fixed<24,12>'}}\n\
         \x20 - name: bn\n    type: batchnorm\n    activation: relu\n\
         \x20   precision: {{scale: 'ap_fixed<5,2>', shift: 'ap_fixed<6,3>', accum: 'ap_fixed<40,20>', output: 'ap_ufixed<6,3,AP_RND_CONV,AP_SAT>'}}\n"
    )
}

const DENSE: &str = "  - name: l\n    type: dense\n    inputs: 7\n    outputs: 5\n    pe: 5\n    simd: 7\n";
const CONV: &str = "  - name: l\n    type: conv2d\n    filters: 3\n    padding: same\n";

fn load(yaml: &str) -> Model {
    model::parse(yaml, std::path::Path::new("fold.yaml")).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// All-maximum, all-minimum, zero, then random codes of the input format.
fn inputs(m: &Model, n: usize, seed: u64) -> Vec<Vec<i128>> {
    let f = m.input_format;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut v = vec![vec![f.max_raw(); m.input_len()], vec![f.min_raw(); m.input_len()], vec![0; m.input_len()]];
    while v.len() < n {
        v.push((0..m.input_len()).map(|_| rng.random_range(f.min_raw()..=f.max_raw())).collect());
    }
    v
}

fn same_codes(m: &Model, p: &Params, fm: &Model, fp: &Params, seed: u64) {
    let a = Network::new(m.clone(), p.clone()).expect("network");
    let b = Network::new(fm.clone(), fp.clone()).expect("folded network");
    for (k, x) in inputs(m, 200, seed).iter().enumerate() {
        assert_eq!(a.infer(x).unwrap(), b.infer(x).unwrap(), "input {k} (seed {seed})");
    }
}

#[test]
fn a_folded_layer_computes_the_same_codes_for_every_weight_draw() {
    for (first, input) in [(DENSE, "[7]"), (CONV, "[5, 4, 2]")] {
        let m = load(&foldable(first, input));
        for seed in 0..20 {
            let p = weights::random(&m, seed);
            let (fm, fp, notes) = fold(&m, &p);
            assert_eq!(notes.len(), 1);
            assert_eq!(notes[0].kept, None, "{first}: {notes:?}");
            assert_eq!(fm.layers.len(), 1, "the batch norm is gone");
            same_codes(&m, &p, &fm, &fp, seed);
        }
    }
}

#[test]
fn batch_norms_that_cannot_fold_exactly_stay() {
    let base = foldable(DENSE, "[7]");
    let cases = [
        // A relu between the layer and the batch norm.
        (base.replacen("activation: linear", "activation: relu", 1), "activation before"),
        // The layer's output rounds its accumulator.
        (base.replace("output: 'ap_fixed<24,12>'", "output: 'ap_fixed<8,4>'"), "rounds the accumulator"),
        // The batch norm's accumulator rounds the scaled value.
        (base.replace("accum: 'ap_fixed<40,20>'", "accum: 'ap_fixed<20,10>'"), "rounds the scaled value"),
        // The layer's accumulator rounds the products.
        (base.replace("accum: 'ap_fixed<24,12>', output: 'ap_fixed<24,12>'", "accum: 'ap_fixed<24,20>', output: 'ap_fixed<24,12>'"), "fewer fraction bits"),
        // The layer's accumulator is too narrow for the sums.
        (base.replace("accum: 'ap_fixed<24,12>', output: 'ap_fixed<24,12>'", "accum: 'ap_fixed<8,3>', output: 'ap_fixed<8,3>'"), "partial sum can leave"),
        // A trainable batch norm.
        (format!("{base}    trainable: [scale]\n"), "trainable"),
    ];
    for (yaml, why) in cases {
        let m = load(&yaml);
        let p = weights::random(&m, 3);
        let (fm, fp, notes) = fold(&m, &p);
        let kept = notes[0].kept.as_deref().unwrap_or_else(|| panic!("folded: {yaml}"));
        assert!(kept.contains(why), "{kept} (wanted {why})");
        assert_eq!(fm.layers.len(), 2);
        same_codes(&m, &p, &fm, &fp, 3);
    }
}

/// A network with a folded batch norm (after a linear conv) and a kept one
/// (after a relu conv): the design has one stage fewer, report.md says
/// which, and the hardware equals the unfolded simulator bit for bit with
/// the predicted cycles.
#[test]
fn folded_hardware_is_bit_exact_against_the_unfolded_simulator() {
    cosim::require_tool("verilator").unwrap_or_else(|e| panic!("{e}"));
    let yaml = "name: fold\ninput:\n  shape: [6, 5, 2]\n  format: 'ap_ufixed<4,1>'\nweights: w.npz\nlayers:\n\
        \x20 - name: c1\n    type: conv2d\n    filters: 3\n    padding: same\n    activation: linear\n    pe: 3\n    simd: 6\n\
        \x20   precision: {weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,3>', accum: 'ap_fixed<24,12>', output: 'ap_fixed<24,12>'}\n\
        \x20 - name: bn1\n    type: batchnorm\n    activation: relu\n\
        \x20   precision: {scale: 'ap_fixed<5,2>', shift: 'ap_fixed<6,3>', accum: 'ap_fixed<40,20>', output: 'ap_ufixed<6,3,AP_RND_CONV,AP_SAT>'}\n\
        \x20 - name: c2\n    type: conv2d\n    filters: 2\n    stride: 2\n    padding: valid\n    activation: relu\n\
        \x20   precision: {weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,3>', accum: 'ap_fixed<16,8>', output: 'ap_ufixed<6,3,AP_RND,AP_SAT>'}\n\
        \x20 - name: bn2\n    type: batchnorm\n\
        \x20   precision: {scale: 'ap_fixed<5,2>', shift: 'ap_fixed<6,3>', accum: 'ap_fixed<20,10>', output: 'ap_fixed<8,4,AP_RND_CONV,AP_SAT>'}\n\
        \x20 - name: flat\n    type: flatten\n\
        \x20 - name: fc\n    type: dense\n    inputs: 8\n    outputs: 3\n    activation: linear\n\
        \x20   precision: {weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,3>', accum: 'ap_fixed<16,8>', output: 'ap_fixed<8,4>'}\n";
    let m = load(yaml);
    let p = weights::random(&m, 11);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let plan = write_design(&m, &p, &out).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = plan.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["c1", "c2", "bn2", "flat", "fc"]);
    let report = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(report.contains("- bn1: folded into c1, exactly"), "{report}");
    assert!(report.contains("- bn2: kept as its own stage after c2 (c2 has an activation before the batch norm)"), "{report}");
    let net = Network::new(m, p).expect("network");
    let r = cosim::run(&out, &plan, &net, 12, 5, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.passed(), "{}\n{:?}", r.summary(), r.first_mismatch);
}
