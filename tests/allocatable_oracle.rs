//! Oracle tests for the Karpenter simulator's fact base: the built-in catalog and the
//! allocatable formula are checked against the EC2 instance-type table in
//! `data/ec2-instance-types.csv` (Karpenter's own label values and AL2023 allocatable for
//! 1,363 types, see `data/README.md`), and the describe-instance-types importer against the
//! built-in catalog. A missing table is a failure, never a skip.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use karplint::karpenter::allocatable::{
    AmiFamily, DEFAULT_VM_MEMORY_OVERHEAD_PERCENT, KubeletConfig, allocatable,
};
use karplint::karpenter::catalog::{Catalog, LABEL_HYPERVISOR, LABEL_INSTANCE_TYPE};

fn csv_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/ec2-instance-types.csv")
}

/// The table as rows of column → value.
fn load_csv() -> Vec<BTreeMap<String, String>> {
    let path = csv_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; the table is part of the repository (data/README.md)",
            path.display()
        )
    });
    assert!(
        !text.contains('"'),
        "the table is expected to have no quoted cells"
    );
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            assert_eq!(cells.len(), header.len(), "{l}");
            header
                .iter()
                .zip(cells)
                .map(|(h, c)| (h.to_string(), c.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn allocatable_matches_karpenter_for_every_type() {
    let rows = load_csv();
    let catalog = Catalog::builtin();
    let kubelet = KubeletConfig::default();
    let mut mismatches = Vec::new();
    for row in &rows {
        let name = &row["instance_type"];
        let Some(it) = catalog.get(name) else {
            mismatches.push(format!("{name}: not in the built-in catalog"));
            continue;
        };
        let got = allocatable(
            it,
            &kubelet,
            AmiFamily::AL2023,
            DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
        );
        let mut expected: BTreeMap<&str, &str> = row
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("allocatable:")?, v.as_str())))
            .filter(|(_, v)| !v.is_empty())
            .collect();
        let mut actual: BTreeMap<&str, String> = got
            .iter()
            .filter(|(_, q)| !q.is_zero())
            .map(|(k, q)| (k, q.display_for(k)))
            .collect();
        expected.retain(|_, v| *v != "0");
        actual.retain(|_, v| v != "0");
        let actual: BTreeMap<&str, &str> = actual.iter().map(|(k, v)| (*k, v.as_str())).collect();
        if actual != expected {
            mismatches.push(format!("{name}: expected {expected:?}, got {actual:?}"));
        }
    }
    eprintln!(
        "allocatable oracle: {}/{} types match",
        rows.len() - mismatches.len(),
        rows.len()
    );
    assert_eq!(rows.len(), 1363);
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// The committed `data/instance-types.tsv` carries exactly the table's labels and capacities
/// (i.e. it is up to date with the CSV); derived labels agree with the table too.
#[test]
fn builtin_catalog_is_up_to_date_with_the_table() {
    let rows = load_csv();
    let catalog = Catalog::builtin();
    assert_eq!(catalog.len(), rows.len(), "type count differs: regenerate");
    for (row, it) in rows.iter().zip(catalog.iter()) {
        let name = &row["instance_type"];
        assert_eq!(&it.name, name, "order differs: run scripts/gen-catalog.py");
        let mut expected: BTreeMap<String, String> = row
            .iter()
            .filter(|(k, _)| *k != "instance_type" && !k.starts_with("allocatable:"))
            .filter(|(k, v)| !v.is_empty() || *k == LABEL_HYPERVISOR)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        expected.insert(LABEL_INSTANCE_TYPE.into(), name.clone());
        let labels: BTreeMap<String, String> = it
            .labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(
            labels, expected,
            "{name}: labels differ: run scripts/gen-catalog.py"
        );
        assert_eq!(
            it.eni_limited_pods.to_string(),
            row["allocatable:pods"],
            "{name}"
        );
    }
    // Byte-for-byte check through the generator itself, when Python is available.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    match std::process::Command::new("python3")
        .arg(root.join("scripts/gen-catalog.py"))
        .arg("--check")
        .status()
    {
        Ok(status) => assert!(
            status.success(),
            "data/instance-types.tsv is stale: run scripts/gen-catalog.py"
        ),
        Err(e) if std::env::var_os("CI").is_some_and(|v| v == "true") => {
            panic!("python3 is needed for the generator check under CI=true: {e}")
        }
        Err(e) => eprintln!("skipping generator check: python3 unavailable ({e})"),
    }
}

#[test]
fn describe_instance_types_json_matches_builtin() {
    let json = include_str!("fixtures/describe-instance-types.json");
    let imported = Catalog::from_describe_instance_types_json(json).unwrap();
    assert_eq!(imported.len(), 3);
    let builtin = Catalog::builtin();
    let kubelet = KubeletConfig::default();
    for it in &imported {
        let b = builtin.get(&it.name).unwrap();
        assert_eq!(it.labels, b.labels, "{}", it.name);
        assert_eq!(it.capacity, b.capacity, "{}", it.name);
        assert_eq!(it.eni_limited_pods, b.eni_limited_pods, "{}", it.name);
        for family in AmiFamily::ALL {
            let mut a = allocatable(it, &kubelet, family, DEFAULT_VM_MEMORY_OVERHEAD_PERCENT);
            // Only the importer knows IPv4-per-ENI, which Windows turns into a resource.
            let ip = a.remove("vpc.amazonaws.com/PrivateIPv4Address");
            assert_eq!(ip.is_some(), family.is_windows() && it.arch == "amd64");
            assert_eq!(
                a,
                allocatable(b, &kubelet, family, DEFAULT_VM_MEMORY_OVERHEAD_PERCENT),
                "{} {family}",
                it.name
            );
        }
    }
    let g = imported.get("g4dn.xlarge").unwrap();
    assert_eq!(g.label("karpenter.k8s.aws/instance-gpu-name"), Some("t4"));
    assert_eq!(
        g.label("karpenter.k8s.aws/instance-local-nvme"),
        Some("125")
    );
    let t = imported.get("t4g.small").unwrap();
    assert_eq!(t.arch, "arm64");
    assert_eq!(t.eni_limited_pods, 11);
    assert_eq!(t.label("karpenter.k8s.aws/instance-category"), Some("t"));
    assert_eq!(t.label("karpenter.k8s.aws/instance-generation"), Some("4"));
}
