"""The code generator: the model to Python, the Markdown reference and the JSON Schema."""
