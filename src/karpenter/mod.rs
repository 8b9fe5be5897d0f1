//! The Karpenter simulator: what Karpenter itself would decide for a pod, offline.
//!
//! `requirements` is the label-requirement algebra, `catalog` the built-in EC2 instance-type
//! facts and `allocatable` the overhead formula that turns capacity into allocatable.

pub mod allocatable;
pub mod catalog;
pub mod cluster;
pub mod memo;
pub mod pod;
pub mod pool;
pub mod requirements;
pub mod sim;
pub mod taints;
pub mod topology;
pub mod volumes;
