"""The held-out renderer: evaluation crops drawn apart from the training renderer (its own
layout, balloons, marks, tints, damage and faces), for sets no training run draws from."""
