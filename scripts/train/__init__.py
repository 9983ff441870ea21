"""The PyTorch trainer of the default model and the scoring its evaluations share (README.md).

Run from scripts/ as modules (`python3 -m train.train`); only the modules that import torch need
it, so `train.scoring` serves ocrmodel's oracle without torch.
"""
