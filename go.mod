module github.com/reika-lsp/reika

go 1.26
