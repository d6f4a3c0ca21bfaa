"""PyTorch side of atento: the transformer, its tokenizer, task data, training and reference decoding."""
