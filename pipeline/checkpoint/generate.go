package checkpoint

// The generated code is committed so that building needs no protoc.
//go:generate protoc --go_out=. --go_opt=paths=source_relative internal/pb/checkpoint.proto
