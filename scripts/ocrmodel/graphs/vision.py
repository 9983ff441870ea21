"""The vision encoder graph: pixel_values [1,3,224,224] -> vision_embeds [1,256,512].

Built in fp32 with every linear layer as MatMul against a constant [in, out] weight, so that
onnxruntime's MatMulNBitsQuantizer turns each into MatMulNBits for tier 121, and with every
tensor in fp16 (fp32 only at the input and the output, as the contract says) for tier 242.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from .. import spec
from . import gptq
from .builder import FLOAT, FLOAT16, GraphBuilder


class _VisionGraph:
    def __init__(self, weights: dict[str, np.ndarray], fp16: bool) -> None:
        self.w = weights
        self.dtype = np.float16 if fp16 else np.float32
        self.b = GraphBuilder("vision_fp16" if fp16 else "vision_fp32")

    def param(self, name: str, value: np.ndarray | None = None) -> str:
        return self.b.initializer(name, (self.w[name] if value is None else value).astype(self.dtype))

    def scalar(self, value: float) -> str:
        return self.b.const(value, self.dtype)

    def linear(self, x: str, name: str, weight: np.ndarray | None = None, bias: np.ndarray | None = None) -> str:
        weight = self.w[name + ".weight"] if weight is None else weight
        bias = self.w[name + ".bias"] if bias is None else bias
        product = self.b.op("MatMul", [x, self.param(name + ".weight_t", weight.T)], hint=name)
        return self.b.op("Add", [product, self.param(name + ".bias", bias)], hint=name + ".bias")

    def gelu(self, x: str) -> str:
        # The exact erf form as the chain onnxruntime fuses into one Gelu node.
        b = self.b
        erf = b.op("Erf", [b.op("Div", [x, self.scalar(np.sqrt(2.0))], hint="gelu.div")], hint="gelu.erf")
        return b.op(
            "Mul",
            [
                b.op("Mul", [x, b.op("Add", [erf, self.scalar(1.0)], hint="gelu.add")], hint="gelu.mul"),
                self.scalar(0.5),
            ],
            hint="gelu",
        )

    def layer_norm(self, x: str, name: str) -> str:
        return self.b.op(
            "LayerNormalization",
            [x, self.param(name + ".weight"), self.param(name + ".bias")],
            hint=name,
            axis=-1,
            epsilon=spec.LAYER_NORM_EPS,
        )

    def build(self) -> onnx.ModelProto:
        b, w = self.b, self.w
        width, heads, head_dim = spec.VISION_WIDTH, spec.VISION_HEADS, spec.VISION_WIDTH // spec.VISION_HEADS
        pixels = b.input("pixel_values", FLOAT, [1, 3, spec.IMAGE_SIZE, spec.IMAGE_SIZE])
        x = b.op("Cast", [pixels], hint="pixels16", to=FLOAT16) if self.dtype == np.float16 else pixels
        x = b.op(
            "Conv",
            [x, self.param("vision.stem1.weight"), self.param("vision.stem1.bias")],
            hint="stem1",
            kernel_shape=[3, 3],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
        )
        x = self.gelu(x)
        x = b.op(
            "Conv",
            [x, self.param("vision.stem2.weight"), self.param("vision.stem2.bias")],
            hint="stem2",
            kernel_shape=[7, 7],
            strides=[7, 7],
        )
        # NCHW -> NHWC, then rows of tokens. On WebGPU the EP runs Conv in NHWC and wraps it in
        # layout Transposes; this Transpose cancels the one after stem2. Written as Reshape then
        # Transpose instead, the transpose optimizer pushed it through the residual Adds and left
        # a Transpose pair around each of them: 26 extra Transposes, about 8 s of a 55 s encode
        # on SwiftShader (profiled in headless Chromium).
        x = b.op(
            "Reshape",
            [b.op("Transpose", [x], hint="nhwc", perm=[0, 2, 3, 1]), b.const([1, spec.VISION_TOKENS, width])],
            hint="tokens",
        )
        x = b.op("Add", [x, self.param("vision.pos")], hint="pos")
        scale = np.float32(head_dim**-0.5)  # 1/8, folded into q: a power of two, so exact
        for i in range(spec.VISION_LAYERS):
            p = f"vision.layers.{i}."
            qkv_weight = w[p + "attn.qkv.weight"].copy()
            qkv_bias = w[p + "attn.qkv.bias"].copy()
            qkv_weight[:width] *= scale
            qkv_bias[:width] *= scale
            h = self.layer_norm(x, p + "ln1")
            qkv = self.linear(h, p + "attn.qkv", qkv_weight, qkv_bias)
            q, k, v = b.op("Split", [qkv, b.const([width] * 3)], hint=f"v{i}.split", outputs=3, axis=-1)
            heads_shape = b.const([1, spec.VISION_TOKENS, heads, head_dim])
            q = b.op(
                "Transpose", [b.op("Reshape", [q, heads_shape], hint=f"v{i}.q4")], hint=f"v{i}.qT", perm=[0, 2, 1, 3]
            )
            k = b.op(
                "Transpose", [b.op("Reshape", [k, heads_shape], hint=f"v{i}.k4")], hint=f"v{i}.kT", perm=[0, 2, 3, 1]
            )
            v = b.op(
                "Transpose", [b.op("Reshape", [v, heads_shape], hint=f"v{i}.v4")], hint=f"v{i}.vT", perm=[0, 2, 1, 3]
            )
            probabilities = b.op("Softmax", [b.op("MatMul", [q, k], hint=f"v{i}.scores")], hint=f"v{i}.probs", axis=-1)
            context = b.op(
                "Transpose",
                [b.op("MatMul", [probabilities, v], hint=f"v{i}.ctx4")],
                hint=f"v{i}.ctxT",
                perm=[0, 2, 1, 3],
            )
            context = b.op("Reshape", [context, b.const([1, spec.VISION_TOKENS, width])], hint=f"v{i}.ctx")
            x = b.op("Add", [x, self.linear(context, p + "attn.out")], hint=f"v{i}.res1")
            h = self.gelu(self.linear(self.layer_norm(x, p + "ln2"), p + "mlp.fc1"))
            x = b.op("Add", [x, self.linear(h, p + "mlp.fc2")], hint=f"v{i}.res2")
        x = self.linear(self.layer_norm(x, "vision.ln"), "vision.proj")
        if self.dtype == np.float16:
            b.op("Cast", [x], outputs=["vision_embeds"], to=FLOAT)
        else:
            b.op("Identity", [x], outputs=["vision_embeds"])
        b.output("vision_embeds", FLOAT, [1, spec.VISION_TOKENS, spec.HIDDEN])
        precision = "fp16" if self.dtype == np.float16 else "fp32"
        return b.model(f"webgpu-ocr-bench vision encoder ({precision})")


def build_vision(weights: dict[str, np.ndarray], fp16: bool) -> onnx.ModelProto:
    return _VisionGraph(weights, fp16).build()


def quantize_int4(model: onnx.ModelProto, block_size: int, calibration: list[dict[str, np.ndarray]]) -> onnx.ModelProto:
    """Every MatMul with a constant weight becomes MatMulNBits (4 bits, symmetric, blocks along K):
    the graph from onnxruntime's quantizer, the codes rounded by GPTQ (gptq.py) over the inputs
    each MatMul sees when the model reads the calibration feeds."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    hessians = gptq.input_hessians(model, calibration)
    weights = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer if init.name in hessians}
    source = onnx.ModelProto()
    source.CopyFrom(model)  # the quantizer rewrites the graph it is given
    quantizer = MatMulNBitsQuantizer(source, bits=4, block_size=block_size, is_symmetric=True)
    quantizer.process()
    quantized = quantizer.model.model
    initializers = {init.name: init for init in quantized.graph.initializer}
    for node in quantized.graph.node:
        if node.op_type != "MatMulNBits":
            continue
        # onnxruntime names B "<weight>_Q4" and the scales "<weight>_scales".
        weight = node.input[1].removesuffix("_Q4")
        codes, scales = gptq.round_blocks(weights[weight], hessians[weight], block_size)
        packed, scales = gptq.matmulnbits_tensors(codes, scales, block_size)
        for name, values in ((node.input[1], packed), (node.input[2], scales)):
            stored = initializers[name]
            if list(stored.dims) != list(values.shape):
                raise ValueError(f"{name}: onnxruntime stored {list(stored.dims)}, GPTQ made {list(values.shape)}")
            stored.CopyFrom(numpy_helper.from_array(values, name))
    return quantized
