//! Facts of the runtime the page loads rather than of a model: what onnxruntime-web, at each
//! version the page can load (`ort=`, [`OrtVersion`]), can and cannot run. A model's manifest
//! says which operators each graph uses ([`crate::manifest`]); whether the runtime has a kernel
//! for them is decided here, so a new onnxruntime-web version changes this file and no
//! manifest. Kept per version beside it: what the WebGPU kernels need of the device (features,
//! raised limits) and how a session is given the page's device, in
//! `browser/ort-device-needs.js`, and how the profiler's lines read, in
//! `browser/ort-profile.js`. Which inputs the WebGPU kernels read on the CPU (what a variant's
//! `maxStorageBuffersPerShaderStage` is derived from) is in `runtime/ort-webgpu-kernels.json`
//! for the pinned version, the one the manifest is built for; under a later version the page
//! raises that limit to the adapter's all the same (`browser/ort-device-needs.js`), so the
//! manifest's figure is checked for the pinned version only. Tests here hold `package.json`,
//! the device needs and the kernels' file to these versions.

use crate::parameter::choice;

choice! {
    /// An onnxruntime-web version the page loads (`ort=`), each installed by `package.json`
    /// with its integrity pin: the pinned one under its own name, the others as npm aliases
    /// `onnxruntime-web-<version>`.
    OrtVersion { V1_30_0 = "1.30.0", V1_31_1 = "1.31.1" }
}

impl OrtVersion {
    /// The version every run loads unless `ort=` names another: `package.json`'s
    /// `onnxruntime-web`, which the Node tooling imports too.
    pub const PINNED: OrtVersion = OrtVersion::V1_30_0;

    /// The npm package folder this version is installed in, under `node_modules/`.
    pub fn package(self) -> String {
        if self == Self::PINNED {
            "onnxruntime-web".to_owned()
        } else {
            format!("onnxruntime-web-{self}")
        }
    }

    /// Whether the realm's WebGPU device is this version's own WebGPU context 0, which it
    /// destroys once the realm's last session is released. 1.31 attaches its provider through
    /// the EP-device API, which takes no device per session, so the page hands it the realm's
    /// device when context 0 asks for one (`browser/ort-device-needs.js`, "adopted"); 1.30 takes
    /// it per session and leaves it alone.
    pub fn ends_the_device_with_its_last_session(self) -> bool {
        self != OrtVersion::V1_30_0
    }

    /// The folder the realms import this version from and point `wasmPaths` at, relative to
    /// the served root: the runner serves it and the bundle carries it.
    pub fn dist_folder(self) -> String {
        format!("node_modules/{}/dist", self.package())
    }
}

/// Operators (`domain.Type`, the ONNX domain left out for the default one) that the WASM
/// (CPU) execution provider of onnxruntime-web's WebGPU build has no kernel for: a session
/// with one is refused ("Could not find an implementation for GatherBlockQuantized(1)"), so
/// `verify=wasm` cannot decode such a graph again on the CPU. Read with 1.30.0; 1.31.1's
/// WebGPU build is held to the same list (its CPU contrib kernels are built the same way).
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
    use crate::parameter::Choice;

    #[test]
    fn every_version_is_installed_by_package_json_with_its_integrity_pin() {
        let package: serde_json::Value =
            serde_json::from_str(include_str!("../../package.json")).unwrap();
        let lock: serde_json::Value =
            serde_json::from_str(include_str!("../../package-lock.json")).unwrap();
        for version in OrtVersion::ALL {
            // The pinned one under its own name (the Node tooling imports it), the others as
            // npm aliases.
            let wanted = if *version == OrtVersion::PINNED {
                version.to_string()
            } else {
                format!("npm:onnxruntime-web@{version}")
            };
            assert_eq!(
                package["dependencies"][version.package()],
                wanted.as_str(),
                "package.json does not install onnxruntime-web {version} as {}: add it, then \
                 read its facts here, in browser/ort-device-needs.js and browser/ort-profile.js",
                version.package()
            );
            let locked = &lock["packages"][format!("node_modules/{}", version.package())];
            assert_eq!(
                locked["version"],
                version.as_str(),
                "package-lock.json: {version}"
            );
            assert!(
                locked["integrity"]
                    .as_str()
                    .is_some_and(|pin| pin.starts_with("sha512-")),
                "package-lock.json has no integrity pin for onnxruntime-web {version}: run npm install"
            );
        }
    }

    #[test]
    fn each_version_is_imported_from_its_own_package_folder() {
        assert_eq!(
            OrtVersion::V1_30_0.dist_folder(),
            "node_modules/onnxruntime-web/dist"
        );
        assert_eq!(
            OrtVersion::V1_31_1.dist_folder(),
            "node_modules/onnxruntime-web-1.31.1/dist"
        );
    }

    #[test]
    fn the_device_needs_of_the_page_are_kept_for_every_version() {
        // browser/ort-device-needs.js: the features and limits its WebGPU kernels need and how
        // a session is given the device, one entry per version.
        let needs = include_str!("../../browser/ort-device-needs.js");
        let entries: Vec<&str> = needs
            .lines()
            .filter_map(|line| line.strip_prefix("\t\""))
            .filter_map(|line| line.split_once("\": {").map(|(version, _)| version))
            .collect();
        assert_eq!(
            entries,
            OrtVersion::VALUES,
            "browser/ort-device-needs.js keeps other versions than the page loads: read \
             GetRequiredLimits and the device hand-over of each version"
        );
    }

    #[test]
    fn the_kernel_bindings_the_manifest_is_derived_from_are_for_the_pinned_version() {
        // scripts/ocrmodel/manifest.py reads it to write each variant's device limits.
        let kernels: serde_json::Value =
            serde_json::from_str(include_str!("runtime/ort-webgpu-kernels.json")).unwrap();
        assert_eq!(
            kernels["ortWeb"],
            OrtVersion::PINNED.as_str(),
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
