//! Facts of the runtime the page loads rather than of a model: what onnxruntime-web, at the
//! version `package.json` pins, can and cannot run. A model's manifest says which operators
//! each graph uses ([`crate::manifest`]); whether the runtime has a kernel for them is
//! decided here, so a new onnxruntime-web version changes this file and no manifest. What its
//! WebGPU kernels need of the device (features, raised limits) is the page's to ask for, in
//! `browser/ort-device-needs.js`; which inputs its WebGPU kernels read on the CPU (what a
//! variant's `maxStorageBuffersPerShaderStage` is derived from) is in
//! `runtime/ort-webgpu-kernels.json`; a test here holds both to the same version.

/// The onnxruntime-web version these facts were measured with: `package.json`'s pin (a test
/// holds them equal, so a new pin makes this file be looked at again).
pub const ORT_WEB_VERSION: &str = "1.30.0";

/// Operators (`domain.Type`, the ONNX domain left out for the default one) that the WASM
/// (CPU) execution provider of onnxruntime-web's WebGPU build has no kernel for: a session
/// with one is refused ("Could not find an implementation for GatherBlockQuantized(1)"), so
/// `verify=wasm` cannot decode such a graph again on the CPU.
pub const WASM_EP_MISSING_OPERATORS: &[&str] = &["com.microsoft.GatherBlockQuantized"];

/// The first of `operators` the WASM execution provider cannot run, if any.
pub fn wasm_missing_operator(operators: &[String]) -> Option<&str> {
    operators
        .iter()
        .map(String::as_str)
        .find(|operator| WASM_EP_MISSING_OPERATORS.contains(operator))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_facts_are_for_the_pinned_onnxruntime_web() {
        let package: serde_json::Value =
            serde_json::from_str(include_str!("../../package.json")).unwrap();
        assert_eq!(
            package["dependencies"]["onnxruntime-web"], ORT_WEB_VERSION,
            "package.json pins another onnxruntime-web: measure which operators its WASM \
             execution provider lacks, then update runtime.rs"
        );
    }

    #[test]
    fn the_device_needs_of_the_page_are_for_the_same_version() {
        // browser/ort-device-needs.js: the features and limits its WebGPU kernels need.
        let needs = include_str!("../../browser/ort-device-needs.js");
        assert!(
            needs.contains(&format!(
                "export const MEASURED_WITH_ORT_WEB = \"{ORT_WEB_VERSION}\";"
            )),
            "browser/ort-device-needs.js was read for another onnxruntime-web: read \
             GetRequiredLimits of the pinned one again"
        );
    }

    #[test]
    fn the_kernel_bindings_the_manifest_is_derived_from_are_for_the_same_version() {
        // scripts/ocrmodel/manifest.py reads it to write each variant's device limits.
        let kernels: serde_json::Value =
            serde_json::from_str(include_str!("runtime/ort-webgpu-kernels.json")).unwrap();
        assert_eq!(
            kernels["ortWeb"], ORT_WEB_VERSION,
            "runtime/ort-webgpu-kernels.json was read for another onnxruntime-web: read its \
             WebGPU kernels' CPU inputs again, then rebuild the manifest"
        );
    }

    #[test]
    fn an_operator_without_a_wasm_kernel_is_named() {
        let ops = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        assert_eq!(wasm_missing_operator(&ops(&["Gather", "MatMul"])), None);
        assert_eq!(
            wasm_missing_operator(&ops(&["Gather", "com.microsoft.GatherBlockQuantized"])),
            Some("com.microsoft.GatherBlockQuantized")
        );
    }
}
