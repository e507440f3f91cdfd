"""What a project writes: the tool, resource, prompt, factory and raw registries and their
decorators, icons, URI templates and the generated reference."""
