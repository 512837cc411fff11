module github.com/reika-lsp/reika

go 1.26

require (
	github.com/google/go-cmp v0.7.0
	github.com/sashabaranov/go-openai v1.43.0
)
