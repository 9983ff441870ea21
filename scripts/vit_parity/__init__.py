"""The core's ViT image processor held to transformers' (README.md)."""
