"""Model tooling for webgpu-ocr-bench: the shared architecture spec, vocabulary, builder and evaluation sets."""
