//! memorch's bench: what runs inside a virtual device. For now the synthetic app, whose
//! memory image is real (content that compresses, merges and refaults as apps' pages do).

pub mod app;
pub mod content;
