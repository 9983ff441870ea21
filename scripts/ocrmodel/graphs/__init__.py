"""ONNX graph construction for the model contract: one module per graph, one for the node helper."""
