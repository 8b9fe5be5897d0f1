//! Resource quantities, the arithmetic underneath the Karpenter simulator's resource stage.
//!
//! Pod requests, NodePool limits, kubelet reservations and instance-type capacity are all
//! Kubernetes `resource.Quantity` strings (`500m`, `1.5Gi`, `1e3`, `2E`). This module parses
//! them exactly as `k8s.io/apimachinery/pkg/api/resource` does, holds them as exact milli-units
//! in an `i128` (so `2E` bytes and `1m` CPU share one type without rounding), and renders them
//! back in the canonical style Karpenter prints in its messages (`940m`, `1392Mi`, `17Gi`).
//! [`ResourceList`] is the `corev1.ResourceList` counterpart: a sorted map of resource name to
//! quantity with the add / subtract / max / fits operations scheduling needs.

use compact_str::CompactString;
use std::fmt;
use std::str::FromStr;

/// Why a string is not a Kubernetes quantity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// The input was empty (after trimming nothing, Kubernetes does not trim either).
    #[error("quantity is empty")]
    Empty,
    /// The input does not match `<sign><digits>[.<digits>]<suffix>`.
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {input:?}"
    )]
    Invalid {
        /// The offending input.
        input: String,
    },
    /// The value does not fit in 128-bit milli-units.
    #[error("quantity {input:?} is too large")]
    Overflow {
        /// The offending input.
        input: String,
    },
    /// A negative value where Kubernetes requires a non-negative one
    /// ([`Quantity::parse_non_negative`]).
    #[error("quantity {input:?} must be greater than or equal to 0")]
    Negative {
        /// The offending input.
        input: String,
    },
}

/// The pattern the API server quotes when a quantity does not parse.
pub const QUANTITY_PATTERN: &str = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

impl QuantityError {
    /// Why the value was rejected, in the API server's words where it has some, without the
    /// value itself.
    pub fn reason(&self) -> String {
        match self {
            QuantityError::Empty | QuantityError::Invalid { .. } => {
                format!("quantities must match the regular expression '{QUANTITY_PATTERN}'")
            }
            QuantityError::Overflow { .. } => "the quantity is too large to be read".to_string(),
            QuantityError::Negative { .. } => "must be greater than or equal to 0".to_string(),
        }
    }
}

/// An exact Kubernetes quantity, stored as milli-units (`1` == 1000 millis, `1Ki` == 1,024,000).
///
/// Parsing rounds any precision finer than a milli-unit *away from zero* (Kubernetes'
/// `MilliValue()` rounds up too), so `0.1m` becomes `1m`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Quantity {
    millis: i128,
}

/// How a quantity is rendered: byte-like resources use binary suffixes, everything else doesn't.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `Ki`, `Mi`, … `Ei` when the value is a whole number divisible by 1024 (memory, storage).
    Binary,
    /// Plain integers, or `<n>m` when fractional (cpu, pods, extended resources).
    Decimal,
}

const BINARY_SUFFIXES: [(&str, u32); 6] = [
    ("Ki", 10),
    ("Mi", 20),
    ("Gi", 30),
    ("Ti", 40),
    ("Pi", 50),
    ("Ei", 60),
];

impl Quantity {
    /// The zero quantity.
    pub const ZERO: Quantity = Quantity { millis: 0 };

    /// A quantity of exactly `millis` milli-units.
    pub const fn from_millis(millis: i128) -> Self {
        Quantity { millis }
    }

    /// A whole number of units (`from_units(2)` is `2`, i.e. 2000 millis).
    pub const fn from_units(units: i64) -> Self {
        Quantity {
            millis: units as i128 * 1000,
        }
    }

    /// `mib` mebibytes, as a byte quantity.
    pub const fn from_mebibytes(mib: i64) -> Self {
        Quantity {
            millis: mib as i128 * 1024 * 1024 * 1000,
        }
    }

    /// The exact value in milli-units.
    pub const fn as_millis(self) -> i128 {
        self.millis
    }

    /// The value in whole units, rounded up like Kubernetes' `Value()`.
    pub fn ceil_units(self) -> i128 {
        self.millis.div_euclid(1000) + i128::from(self.millis.rem_euclid(1000) != 0)
    }

    /// True when the quantity is exactly zero.
    pub const fn is_zero(self) -> bool {
        self.millis == 0
    }

    /// Parses a Kubernetes quantity string, e.g. `500m`, `1.5Gi`, `1e3`, `-2E`, `+100Ki`.
    pub fn parse(input: &str) -> Result<Self, QuantityError> {
        parse_quantity(input)
    }

    /// Parses a quantity Kubernetes requires to be non-negative (container requests and
    /// limits, pod overhead, LimitRange defaults, node capacity).
    pub fn parse_non_negative(input: &str) -> Result<Self, QuantityError> {
        let q = parse_quantity(input)?;
        if q.millis < 0 {
            return Err(QuantityError::Negative {
                input: input.to_string(),
            });
        }
        Ok(q)
    }

    /// `self + other`, saturating at the `i128` bounds.
    pub fn saturating_add(self, other: Quantity) -> Quantity {
        Quantity::from_millis(self.millis.saturating_add(other.millis))
    }

    /// `self - other`, never below zero (a reservation larger than capacity leaves nothing).
    pub fn saturating_sub(self, other: Quantity) -> Quantity {
        Quantity::from_millis(self.millis.saturating_sub(other.millis).max(0))
    }

    /// Renders with the given format (see [`Format`]).
    pub fn display_as(self, format: Format) -> String {
        let m = self.millis;
        if m % 1000 != 0 {
            return format!("{m}m");
        }
        let units = m / 1000;
        if format == Format::Binary && units != 0 {
            let abs = units.unsigned_abs();
            for (suffix, shift) in BINARY_SUFFIXES.iter().rev() {
                let div = 1u128 << shift;
                if abs.is_multiple_of(div) {
                    return format!("{}{suffix}", units / div as i128);
                }
            }
        }
        format!("{units}")
    }

    /// Renders in the format Kubernetes uses for the named resource: binary suffixes for
    /// `memory`, `ephemeral-storage`, `storage` and `hugepages-*`, decimal for the rest.
    pub fn display_for(self, resource: &str) -> String {
        self.display_as(format_for(resource))
    }
}

/// The rendering format Kubernetes uses for a resource name.
pub fn format_for(resource: &str) -> Format {
    if matches!(resource, "memory" | "ephemeral-storage" | "storage")
        || resource.starts_with("hugepages-")
    {
        Format::Binary
    } else {
        Format::Decimal
    }
}

/// The canonical rendering used in messages and round-tripped by [`Quantity::parse`]:
///
/// * a value that is not a whole number of units prints as milli-units: `940m`, `1500m`;
/// * a whole, non-zero value divisible by 1024 prints with the largest binary suffix that
///   keeps the mantissa whole: `1392Mi`, `17Gi`, `1Ki` (so byte-like values read naturally);
/// * any other whole value prints as a plain integer: `512`, `1000`, `0`.
///
/// Use [`Quantity::display_for`] when the resource is known, so `1024` pods stay `1024`.
impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display_as(Format::Binary))
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

fn parse_quantity(input: &str) -> Result<Quantity, QuantityError> {
    if input.is_empty() {
        return Err(QuantityError::Empty);
    }
    let invalid = || QuantityError::Invalid {
        input: input.to_string(),
    };
    let overflow = || QuantityError::Overflow {
        input: input.to_string(),
    };
    let bytes = input.as_bytes();
    let mut pos = 0;
    let mut negative = false;
    if let Some(&c) = bytes.first()
        && (c == b'+' || c == b'-')
    {
        negative = c == b'-';
        pos = 1;
    }
    let int_start = pos;
    while pos < bytes.len() && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    let int_digits = &input[int_start..pos];
    let mut frac_digits = "";
    if pos < bytes.len() && bytes[pos] == b'.' {
        pos += 1;
        let frac_start = pos;
        while pos < bytes.len() && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        frac_digits = &input[frac_start..pos];
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return Err(invalid());
    }
    let suffix = &input[pos..];
    // (base, exponent) of the multiplier: value = number × base^exponent.
    let (base, exponent): (u32, i64) = match suffix {
        "" => (10, 0),
        "n" => (10, -9),
        "u" => (10, -6),
        "m" => (10, -3),
        "k" => (10, 3),
        "M" => (10, 6),
        "G" => (10, 9),
        "T" => (10, 12),
        "P" => (10, 15),
        "E" => (10, 18),
        "Ki" => (2, 10),
        "Mi" => (2, 20),
        "Gi" => (2, 30),
        "Ti" => (2, 40),
        "Pi" => (2, 50),
        "Ei" => (2, 60),
        s if s.starts_with(['e', 'E']) => {
            let exp = &s[1..];
            let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid());
            }
            // Kubernetes reads the exponent as an int32; anything wider is out of range.
            let e: i32 = exp.parse().map_err(|_| overflow())?;
            (10, i64::from(e))
        }
        _ => return Err(invalid()),
    };

    // mantissa = int_digits.frac_digits as an integer, scaled by 10^-frac_len.
    let digits = (int_digits.bytes().chain(frac_digits.bytes())).skip_while(|&b| b == b'0');
    let mut mantissa: i128 = 0;
    for b in digits {
        mantissa = mantissa
            .checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(b - b'0')))
            .ok_or_else(overflow)?;
    }
    if mantissa == 0 {
        return Ok(Quantity::ZERO);
    }
    let frac_len = i64::try_from(frac_digits.len()).map_err(|_| overflow())?;

    // millis = mantissa × 10^(3 - frac_len) × base^exponent, rounded away from zero.
    let mut num: i128 = mantissa;
    let mut den: i128 = 1;
    // Stops at the first overflow, so a huge exponent costs at most 128 steps.
    let mul_pow = |v: i128, b: i128, e: u64| -> Option<i128> {
        let mut v = v;
        for _ in 0..e {
            v = v.checked_mul(b)?;
        }
        Some(v)
    };
    // i64 holds 3 − (any string length) + (any int32 exponent) without overflow.
    let ten_exp = (3 - frac_len)
        .checked_add(if base == 10 { exponent } else { 0 })
        .ok_or_else(overflow)?;
    if ten_exp >= 0 {
        num = mul_pow(num, 10, ten_exp.unsigned_abs()).ok_or_else(overflow)?;
    } else {
        // Beyond 10^38 the denominator cannot be represented; the value is then below one
        // milli-unit, which rounds up to 1m.
        den = mul_pow(den, 10, ten_exp.unsigned_abs()).unwrap_or(i128::MAX);
    }
    if base == 2 {
        num = mul_pow(num, 2, exponent.unsigned_abs()).ok_or_else(overflow)?;
    }
    let mut millis = (num / den)
        .checked_add(i128::from(num % den != 0))
        .ok_or_else(overflow)?;
    if negative {
        millis = -millis;
    }
    Ok(Quantity::from_millis(millis))
}

/// A `corev1.ResourceList`: resource name → quantity, iterated in sorted key order.
///
/// Kept as one vector sorted by name, the names inline: a list names a handful of
/// resources, and the batch copies and compares such lists for every pod and NodeClaim.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ResourceList(Vec<(CompactString, Quantity)>);

impl ResourceList {
    /// An empty list.
    pub fn new() -> Self {
        ResourceList(Vec::new())
    }

    /// Where `name` is, or would be inserted.
    fn position(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(name))
    }

    /// Sets `name` to `quantity`, replacing any previous value.
    pub fn insert(&mut self, name: impl Into<CompactString>, quantity: Quantity) {
        let name = name.into();
        match self.position(&name) {
            Ok(i) => self.0[i].1 = quantity,
            Err(i) => self.0.insert(i, (name, quantity)),
        }
    }

    /// Builder form of [`ResourceList::insert`].
    pub fn with(mut self, name: impl Into<CompactString>, quantity: Quantity) -> Self {
        self.insert(name, quantity);
        self
    }

    /// The quantity for `name`, if present.
    pub fn get(&self, name: &str) -> Option<Quantity> {
        self.position(name).ok().map(|i| self.0[i].1)
    }

    /// The quantity for `name`, zero when absent (Kubernetes' convention).
    pub fn get_or_zero(&self, name: &str) -> Quantity {
        self.get(name).unwrap_or(Quantity::ZERO)
    }

    /// Removes `name`, returning its quantity.
    pub fn remove(&mut self, name: &str) -> Option<Quantity> {
        self.position(name).ok().map(|i| self.0.remove(i).1)
    }

    /// Iterates `(name, quantity)` in sorted name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Quantity)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// Number of resources listed.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when no resource is listed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds every quantity of `other` into `self` (`resources.MergeInto`).
    pub fn add(&mut self, other: &ResourceList) {
        for (k, v) in &other.0 {
            match self.position(k) {
                Ok(i) => self.0[i].1 = self.0[i].1.saturating_add(*v),
                Err(i) => self.0.insert(i, (k.clone(), *v)),
            }
        }
    }

    /// `self − other` per resource, floored at zero; resources only in `other` are ignored.
    pub fn saturating_sub(&self, other: &ResourceList) -> ResourceList {
        ResourceList(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), v.saturating_sub(other.get_or_zero(k))))
                .collect(),
        )
    }

    /// `self − other` per resource, allowed to go negative (Karpenter's `resources.Subtract`:
    /// an overhead larger than capacity leaves a negative allocatable that nothing fits);
    /// resources only in `other` are ignored.
    pub fn sub(&self, other: &ResourceList) -> ResourceList {
        ResourceList(
            self.0
                .iter()
                .map(|(k, v)| {
                    let m = v
                        .as_millis()
                        .saturating_sub(other.get_or_zero(k).as_millis());
                    (k.clone(), Quantity::from_millis(m))
                })
                .collect(),
        )
    }

    /// Per-resource maximum of `self` and `other` (`resources.MaxResources`).
    pub fn max(&self, other: &ResourceList) -> ResourceList {
        let mut out = self.clone();
        for (k, v) in &other.0 {
            match out.position(k) {
                Ok(i) => out.0[i].1 = out.0[i].1.max(*v),
                Err(i) => out.0.insert(i, (k.clone(), *v)),
            }
        }
        out
    }

    /// `Ok(())` when every requested quantity is ≤ what `available` lists (absent = 0);
    /// otherwise the names of the resources that do not fit, in sorted order.
    pub fn fits(&self, available: &ResourceList) -> Result<(), Vec<String>> {
        let short: Vec<String> = self
            .0
            .iter()
            .filter(|(k, v)| *v > available.get_or_zero(k))
            .map(|(k, _)| k.to_string())
            .collect();
        if short.is_empty() { Ok(()) } else { Err(short) }
    }

    /// Karpenter's rendering of a resource list, e.g. `{"cpu":"512","memory":"1Gi","pods":"1"}`.
    pub fn to_json_string(&self) -> String {
        let body: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}:{}",
                    serde_json::Value::from(k.as_str()),
                    serde_json::Value::from(v.display_for(k))
                )
            })
            .collect();
        format!("{{{}}}", body.join(","))
    }
}

impl fmt::Display for ResourceList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json_string())
    }
}

/// A name listed twice keeps its last quantity, as in a map.
impl<K: Into<CompactString>> FromIterator<(K, Quantity)> for ResourceList {
    fn from_iter<T: IntoIterator<Item = (K, Quantity)>>(iter: T) -> Self {
        let mut list = ResourceList::new();
        for (k, v) in iter {
            list.insert(k, v);
        }
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn parses_like_kubernetes() {
        let cases: &[(&str, i128)] = &[
            ("0", 0),
            ("1", 1000),
            ("500m", 500),
            ("0.5", 500),
            (".5", 500),
            ("5.", 5000),
            ("1Ki", 1024 * 1000),
            ("100Ki", 100 * 1024 * 1000),
            ("1Gi", (1 << 30) * 1000),
            ("1.5Gi", 1_610_612_736_000),
            ("1e3", 1_000_000),
            ("1E3", 1_000_000),
            ("1e-3", 1),
            ("1e+3", 1_000_000),
            ("2E", 2_000_000_000_000_000_000_000),
            ("2Ei", 2 * (1 << 60) * 1000),
            ("0.1", 100),
            ("+1", 1000),
            ("-1", -1000),
            ("-500m", -500),
            ("1k", 1_000_000),
            ("1M", 1_000_000_000),
            ("1G", 1_000_000_000_000),
            ("1000n", 1),
            ("1n", 1),
            ("1u", 1),
            ("0.1m", 1),
            ("007", 7000),
            ("0.000", 0),
        ];
        for (s, millis) in cases {
            assert_eq!(q(s).as_millis(), *millis, "{s}");
        }
    }

    /// After `TestQuantityParse` in k8s.io/apimachinery `pkg/api/resource/quantity_test.go`:
    /// what `ParseQuantity` accepts (its regex `^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`
    /// and then one known suffix or a decimal exponent), and what it refuses though the
    /// regex matches.
    #[test]
    fn test_quantity_parse() {
        let valid: &[(&str, i128)] = &[
            ("0.5", 500),
            ("1e3", 1_000_000),
            ("1", 1000),
            ("128974848", 128_974_848_000),
            ("1Gi", (1 << 30) * 1000),
            ("500m", 500),
            ("+1", 1000),
            (".5", 500),
            ("1.", 1000),
            ("0.001", 1),
            ("1E-3", 1),
            ("100Mi", 100 * (1 << 20) * 1000),
            ("1M", 1_000_000_000),
            ("5e+1", 50_000),
        ];
        for (s, millis) in valid {
            assert_eq!(
                Quantity::parse(s).map(Quantity::as_millis),
                Ok(*millis),
                "{s}"
            );
        }
        // The regex matches these, the suffix does not: the API server rejects them.
        for s in ["1e3m", "1Gim", "1mi", "1ki", "1e", "1.5.5", "1Ki3", "1iGi"] {
            assert!(Quantity::parse(s).is_err(), "{s:?} should be rejected");
        }
        // Nor do these match the regex.
        for s in ["lots", "1 Gi", "Gi", "", "0x1", "1,5"] {
            assert!(Quantity::parse(s).is_err(), "{s:?} should be rejected");
        }
    }

    #[test]
    fn rejects_garbage() {
        for s in [
            "", "abc", "1x", "1 Gi", " 1", "1Gi ", "Gi", "+", "-", ".", "1.2.3", "1e", "1e+",
            "1ee3", "1KI", "1kb", "--1", "1mm", "1Gix", "0x10", "1e3.5",
        ] {
            assert!(Quantity::parse(s).is_err(), "{s:?} should be rejected");
        }
        assert_eq!(Quantity::parse(""), Err(QuantityError::Empty));
        assert!(matches!(
            Quantity::parse("1e99"),
            Err(QuantityError::Overflow { .. })
        ));
    }

    #[test]
    fn renders_canonically() {
        assert_eq!(q("940m").to_string(), "940m");
        assert_eq!(q("1392Mi").to_string(), "1392Mi");
        assert_eq!(q("17Gi").to_string(), "17Gi");
        assert_eq!(q("512").to_string(), "512");
        assert_eq!(q("1024Mi").to_string(), "1Gi");
        assert_eq!(q("1500").to_string(), "1500");
        assert_eq!(q("2000m").to_string(), "2");
        assert_eq!(q("0").to_string(), "0");
        assert_eq!(q("-1Ki").to_string(), "-1Ki");
        assert_eq!(q("1024").display_for("pods"), "1024");
        assert_eq!(q("1024").display_for("memory"), "1Ki");
        assert_eq!(q("1.5").display_for("cpu"), "1500m");
    }

    #[test]
    fn resource_list_ops() {
        let req: ResourceList = [("cpu", q("512")), ("memory", q("1Gi")), ("pods", q("1"))]
            .into_iter()
            .collect();
        assert_eq!(
            req.to_json_string(),
            r#"{"cpu":"512","memory":"1Gi","pods":"1"}"#
        );
        let avail: ResourceList = [("cpu", q("3920m")), ("memory", q("14481Mi"))]
            .into_iter()
            .collect();
        assert_eq!(req.fits(&avail), Err(vec!["cpu".into(), "pods".into()]));
        let small: ResourceList = [("cpu", q("1")), ("nvidia.com/gpu", q("0"))]
            .into_iter()
            .collect();
        assert_eq!(small.fits(&avail), Ok(()));

        let mut sum = avail.clone();
        sum.add(&small);
        assert_eq!(sum.get("cpu"), Some(q("4920m")));
        assert_eq!(sum.get("nvidia.com/gpu"), Some(Quantity::ZERO));
        let diff = avail.saturating_sub(&req);
        assert_eq!(diff.get("cpu"), Some(Quantity::ZERO));
        assert_eq!(diff.get("memory"), Some(q("13457Mi")));
        assert_eq!(diff.get("pods"), None);
        let mx = req.max(&avail);
        assert_eq!(mx.get("cpu"), Some(q("512")));
        assert_eq!(mx.get("memory"), Some(q("14481Mi")));
        assert_eq!(mx.get("pods"), Some(q("1")));
    }

    #[test]
    fn exponents_beyond_i32_arithmetic_are_rejected_not_wrapped() {
        // 3 + 2147483647 overflowed an i32: the value wrapped to a tiny one and read as 1m.
        assert!(matches!(
            Quantity::parse("1e2147483647"),
            Err(QuantityError::Overflow { .. })
        ));
        assert!(matches!(
            Quantity::parse("1e2147483648"),
            Err(QuantityError::Overflow { .. })
        ));
        // A vanishing positive value still rounds up to one milli-unit.
        assert_eq!(
            Quantity::parse("1e-2147483648"),
            Ok(Quantity::from_millis(1))
        );
        assert_eq!(
            Quantity::parse("-0.5e-2147483648"),
            Ok(Quantity::from_millis(-1))
        );
        assert!(matches!(
            Quantity::parse_non_negative("-1m"),
            Err(QuantityError::Negative { .. })
        ));
        assert_eq!(Quantity::parse_non_negative("0"), Ok(Quantity::ZERO));
    }

    /// A few resource names and quantities, names repeated.
    fn arb_list() -> impl Strategy<Value = Vec<(&'static str, i64)>> {
        let name = prop_oneof![
            Just("cpu"),
            Just("memory"),
            Just("pods"),
            Just("nvidia.com/gpu"),
            Just("example.com/a-resource-name-longer-than-inline"),
        ];
        proptest::collection::vec((name, -5i64..5_000), 0..6)
    }

    fn list_of(entries: &[(&'static str, i64)]) -> ResourceList {
        (entries.iter())
            .map(|&(k, v)| (k, Quantity::from_millis(i128::from(v))))
            .collect()
    }

    fn model_of(entries: &[(&'static str, i64)]) -> BTreeMap<&'static str, i128> {
        entries.iter().map(|&(k, v)| (k, i128::from(v))).collect()
    }

    fn as_model(list: &ResourceList) -> Vec<(String, i128)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.as_millis()))
            .collect()
    }

    fn sorted(model: BTreeMap<&'static str, i128>) -> Vec<(String, i128)> {
        model.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    proptest! {
        /// A resource list answers as a map of name to quantity: the last value of a name
        /// wins, names iterate sorted, and `add`, `max`, `sub`, `saturating_sub`, `remove`
        /// and `fits` are the per-name operations.
        #[test]
        fn resource_list_is_a_sorted_map(a in arb_list(), b in arb_list()) {
            let (la, lb) = (list_of(&a), list_of(&b));
            let (ma, mb) = (model_of(&a), model_of(&b));
            prop_assert_eq!(as_model(&la), sorted(ma.clone()));
            prop_assert_eq!(la.len(), ma.len());
            let mut added = la.clone();
            added.add(&lb);
            let mut sum = ma.clone();
            for (k, v) in &mb {
                *sum.entry(k).or_default() += v;
            }
            prop_assert_eq!(as_model(&added), sorted(sum));
            let mut max = ma.clone();
            for (k, v) in &mb {
                let cur = max.entry(k).or_insert(*v);
                *cur = (*cur).max(*v);
            }
            prop_assert_eq!(as_model(&la.max(&lb)), sorted(max));
            let minus = |floor: bool| {
                let m = (ma.iter()).map(|(k, v)| {
                    let d = v - mb.get(k).copied().unwrap_or(0);
                    (*k, if floor { d.max(0) } else { d })
                });
                sorted(m.collect())
            };
            prop_assert_eq!(as_model(&la.sub(&lb)), minus(false));
            prop_assert_eq!(as_model(&la.saturating_sub(&lb)), minus(true));
            let short: Vec<String> = (ma.iter())
                .filter(|(k, v)| **v > mb.get(*k).copied().unwrap_or(0))
                .map(|(k, _)| k.to_string())
                .collect();
            prop_assert_eq!(la.fits(&lb), if short.is_empty() { Ok(()) } else { Err(short) });
            let (mut removed, mut left) = (la.clone(), ma.clone());
            for (k, _) in &b {
                prop_assert_eq!(removed.remove(k).map(|q| q.as_millis()), left.remove(k));
            }
            prop_assert_eq!(as_model(&removed), sorted(left));
        }

        /// Any input parses or is rejected; none panics.
        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            let _ = Quantity::parse(&s);
            let _ = Quantity::parse_non_negative(&s);
        }

        /// Quantity-shaped inputs with any exponent: no panic, and an `Ok` is exact.
        #[test]
        fn shaped_inputs_are_exact_or_rejected(
            sign in "[+-]?",
            mantissa in 0u32..100_000,
            exponent in any::<i32>(),
        ) {
            let s = format!("{sign}{mantissa}e{exponent}");
            let negative = sign == "-";
            match Quantity::parse(&s) {
                Ok(q) => {
                    // millis = mantissa × 10^(exponent + 3), rounded away from zero.
                    let expected = if mantissa == 0 {
                        0
                    } else if i64::from(exponent) + 3 >= 0 {
                        let ten = 10i128.checked_pow(u32::try_from(i64::from(exponent) + 3).unwrap());
                        let v = ten.and_then(|t| t.checked_mul(i128::from(mantissa)));
                        prop_assert!(v.is_some(), "{s} should have overflowed");
                        v.unwrap()
                    } else {
                        let den = 10i128.checked_pow((-(i64::from(exponent) + 3)) as u32);
                        match den {
                            Some(d) => {
                                let m = i128::from(mantissa);
                                m / d + i128::from(m % d != 0)
                            }
                            None => 1,
                        }
                    };
                    prop_assert_eq!(q.as_millis(), if negative { -expected } else { expected });
                    if negative && expected != 0 {
                        prop_assert!(Quantity::parse_non_negative(&s).is_err());
                    }
                }
                Err(e) => {
                    prop_assert!(matches!(e, QuantityError::Overflow { .. }), "{s}: {e}");
                    // Only a value too large for i128 milli-units is refused.
                    prop_assert!(mantissa != 0 && exponent > 30, "{s}");
                }
            }
        }

        /// Sums saturate instead of wrapping, whatever the quantities.
        #[test]
        fn sums_never_wrap(a in any::<i128>(), b in any::<i128>()) {
            let (qa, qb) = (Quantity::from_millis(a), Quantity::from_millis(b));
            let mut list = ResourceList::new().with("cpu", qa);
            list.add(&ResourceList::new().with("cpu", qb));
            prop_assert_eq!(list.get("cpu"), Some(qa.saturating_add(qb)));
            prop_assert_eq!(qa.saturating_add(qb).as_millis(), a.saturating_add(b));
            prop_assert!(qa.saturating_sub(qb).as_millis() >= 0);
        }

        /// Rendering for any resource name parses back to the same value.
        #[test]
        fn display_for_round_trips(
            millis in -(1i128 << 100)..(1i128 << 100),
            resource in "cpu|memory|pods|ephemeral-storage|hugepages-2Mi|nvidia.com/gpu",
        ) {
            let v = Quantity::from_millis(millis);
            prop_assert_eq!(Quantity::parse(&v.display_for(&resource)), Ok(v));
        }

        #[test]
        fn display_round_trips(millis in -(1i128 << 90)..(1i128 << 90)) {
            let v = Quantity::from_millis(millis);
            prop_assert_eq!(Quantity::parse(&v.to_string()), Ok(v));
            prop_assert_eq!(Quantity::parse(&v.display_for("cpu")), Ok(v));
        }

        #[test]
        fn whole_binary_round_trips(units in 0i64..(1i64 << 40), shift in 0u32..20) {
            let v = Quantity::from_millis(i128::from(units) * 1000 * (1i128 << shift));
            prop_assert_eq!(Quantity::parse(&v.to_string()), Ok(v));
        }

        #[test]
        fn decimal_strings_parse_exactly(int in 0u64..1_000_000, frac in 0u32..1000) {
            let s = format!("{int}.{frac:03}");
            prop_assert_eq!(
                Quantity::parse(&s).map(Quantity::as_millis),
                Ok(i128::from(int) * 1000 + i128::from(frac))
            );
        }
    }
}
