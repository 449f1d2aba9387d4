//! Detectors: each finds values of one kind and reports a kind and a byte
//! span per finding. (Being built: see the detect issue work.)
