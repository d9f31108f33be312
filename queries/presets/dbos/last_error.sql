-- purpose: the error DBOS stored for a failed workflow (serialized by its serializer), cut to its first 500 characters
left(t.error, 500)
