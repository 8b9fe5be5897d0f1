//! The Karpenter simulator: what Karpenter itself would decide for a pod, offline.
//!
//! `requirements` is the label-requirement algebra, `catalog` the built-in EC2 instance-type
//! facts, `allocatable` the overhead formula that turns capacity into allocatable and
//! `ephemeral` the node class's ephemeral-storage capacity.

pub mod allocatable;
pub mod catalog;
pub mod cluster;
pub(crate) mod ephemeral;
pub mod export;
pub(crate) mod memo;
pub(crate) mod overlay;
pub(crate) mod pod;
pub(crate) mod pool;
pub(crate) mod preferences;
pub mod prices;
pub(crate) mod requirements;
pub(crate) mod scheduler;
pub(crate) mod sim;
pub(crate) mod taints;
pub(crate) mod topology;
pub mod version;
pub(crate) mod volumes;
