//! Per-endpoint cost models: a lookup answers for the endpoints it knows, and
//! `EndpointCosts` uses its default model for every other endpoint. Closures and
//! `(&str, CostModel)` tables need no allocator; `CostTable` needs `alloc`.

#![allow(
    clippy::unwrap_used,
    reason = "the helpers build fixed, known-good values"
)]

use bayesretry_cost::{CostLookup, CostModel, EndpointCosts, NoOverrides};

fn model(value: f64, cost: f64) -> CostModel {
    CostModel::new(value, cost).unwrap()
}

#[test]
fn without_overrides_every_endpoint_gets_the_default() {
    let default = model(1.0, 0.1);
    let costs = EndpointCosts::new(default);
    assert_eq!(costs.model_for("a"), default);
    assert_eq!(costs.model_for(""), default);
    assert_eq!(NoOverrides.cost_model("a"), None);
    assert_eq!(costs.default_model(), default);
}

#[test]
fn a_closure_overrides_the_endpoints_it_answers_for() {
    let default = model(1.0, 0.1);
    let premium = model(100.0, 1.0);
    let costs = EndpointCosts::new(default)
        .with_overrides(move |endpoint: &str| (endpoint == "premium").then_some(premium));
    assert_eq!(costs.model_for("premium"), premium);
    assert_eq!(costs.model_for("basic"), default);
    // p = 0.05: pays at 1/100, not at 0.1/1
    assert!(costs.retry_pays("premium", 0.05));
    assert!(!costs.retry_pays("basic", 0.05));
    assert!(costs.expected_value_of_retry("premium", 0.05) > 0.0);
}

#[test]
fn a_function_pointer_is_a_lookup() {
    fn lookup(endpoint: &str) -> Option<CostModel> {
        endpoint
            .strip_prefix("cost-")
            .and_then(|c| c.parse().ok())
            .and_then(|c| CostModel::new(1.0, c).ok())
    }
    let costs = EndpointCosts::new(model(1.0, 0.0)).with_overrides(lookup);
    assert_eq!(costs.model_for("cost-0.25").break_even_probability(), 0.25);
    assert_eq!(costs.model_for("cost-nan!").break_even_probability(), 0.0);
}

#[test]
fn a_static_table_is_searched_in_order() {
    let first = model(10.0, 1.0);
    let second = model(20.0, 1.0);
    let table = [("a", first), ("b", second), ("a", second)];
    assert_eq!(table.cost_model("a"), Some(first));
    assert_eq!(table.cost_model("c"), None);
    let slice: &[(&str, CostModel)] = &table;
    assert_eq!(slice.cost_model("b"), Some(second));
    let costs = EndpointCosts::new(model(1.0, 0.5)).with_overrides(slice);
    assert_eq!(costs.model_for("b"), second);
    assert_eq!(costs.model_for("z").attempt_cost(), 0.5);
}

#[test]
fn the_default_can_be_replaced_and_the_overrides_kept() {
    let costs = EndpointCosts::new(model(1.0, 0.1))
        .with_overrides([("x", model(5.0, 1.0))])
        .with_default(model(2.0, 0.0));
    assert_eq!(costs.model_for("y"), model(2.0, 0.0));
    assert_eq!(costs.overrides().cost_model("x"), Some(model(5.0, 1.0)));
}

#[cfg(feature = "alloc")]
mod table {
    use super::model;
    use bayesretry_cost::{CostLookup, CostTable, EndpointCosts};

    #[test]
    fn a_cost_table_is_a_lookup_built_at_run_time() {
        let mut table: CostTable = [("chat", model(50.0, 1.0)), ("embed", model(1.0, 0.5))]
            .into_iter()
            .collect();
        assert_eq!(table.len(), 2);
        assert!(!table.is_empty());
        assert_eq!(
            table.insert("chat", model(60.0, 1.0)),
            Some(model(50.0, 1.0))
        );
        assert_eq!(table.insert(String::from("rerank"), model(2.0, 0.1)), None);
        assert_eq!(table.cost_model("chat"), Some(model(60.0, 1.0)));
        assert_eq!(table.remove("embed"), Some(model(1.0, 0.5)));
        assert_eq!(table.get("embed"), None);
        let names: Vec<&str> = table.iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["chat", "rerank"]);

        let costs = EndpointCosts::new(model(1.0, 0.0)).with_overrides(&table);
        assert_eq!(costs.model_for("chat"), model(60.0, 1.0));
        assert_eq!(costs.model_for("embed"), model(1.0, 0.0));
        let owned = EndpointCosts::new(model(1.0, 0.0)).with_overrides(table.clone());
        assert_eq!(owned.model_for("rerank"), model(2.0, 0.1));

        table.extend([("late", model(3.0, 0.3))]);
        assert_eq!(table.len(), 3);
        assert!(CostTable::new().is_empty());
        assert_eq!(CostTable::default(), CostTable::new());
    }
}
