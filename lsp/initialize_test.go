package lsp

import (
	"testing"
)

func TestReadInitialize(t *testing.T) {
	for _, tc := range []struct {
		name        string
		params      string
		wantSkipped bool
		want        clientCaps
	}{
		{
			name: "full",
			params: `{"processId":1,"clientInfo":{"name":"ed"},"initializationOptions":{"reika":{"debug":true}},"capabilities":{
				"general":{"positionEncodings":["utf-8","utf-16"]},
				"window":{"workDoneProgress":true,"showDocument":{"support":true},"showMessage":{"messageActionItem":{}}},
				"workspace":{"applyEdit":true,"workspaceEdit":{"documentChanges":true,"resourceOperations":["create"],"changeAnnotationSupport":{}}},
				"textDocument":{"codeAction":{"codeActionLiteralSupport":{"codeActionKind":{"valueSet":["quickfix"]}},"resolveSupport":{"properties":["edit"]}}}}}`,
			want: clientCaps{name: "ed", progress: true, applyEdit: true, documentChanges: true, versioned: true, annotations: true,
				resourceCreate: true, showDocument: true, messageActions: true, codeActionLit: true, codeActionResolv: true, encoding: UTF8},
		},
		{
			name: "Neovim honours versioned edits though it does not advertise documentChanges",
			params: `{"processId":1,"clientInfo":{"name":"Neovim","version":"0.7.2"},"capabilities":{
				"workspace":{"applyEdit":true,"workspaceEdit":{"resourceOperations":["rename","create","delete"]}}}}`,
			want: clientCaps{name: "Neovim", applyEdit: true, versioned: true, zeroAsOne: true, skipsStale: true, resourceCreate: true, encoding: UTF16},
		},
		{
			name:   "bare: no message actions unless said (a client that does not say may never answer), UTF-16",
			params: `{"processId":null,"capabilities":{}}`,
			want:   clientCaps{encoding: UTF16},
		},
		{
			name:   "eglot answers showMessageRequest though it does not say so",
			params: `{"processId":1,"clientInfo":{"name":"Eglot","version":"1.9"},"capabilities":{"window":{"workDoneProgress":false}}}`,
			want:   clientCaps{name: "Eglot", messageActions: true, encoding: UTF16},
		},
		{
			name: "a capability the server never reads, in Lua's shape for an empty list, costs only itself",
			params: `{"capabilities":{"workspace":{"applyEdit":true,"symbol":{"symbolKind":{"valueSet":{}}}},
				"window":{"workDoneProgress":true}}}`,
			wantSkipped: true,
			want:        clientCaps{applyEdit: true, progress: true, encoding: UTF16},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, skipped, err := readInitialize([]byte(tc.params))
			if err != nil {
				t.Fatalf("readInitialize: %v", err)
			}
			if (skipped != nil) != tc.wantSkipped {
				t.Errorf("readInitialize skipped %v, want skipped %v", skipped, tc.wantSkipped)
			}
			got := newClientCaps(p.Capabilities.ClientCapabilities, p.Capabilities.General.PositionEncodings, p.ClientInfo)
			if got != tc.want {
				t.Errorf("newClientCaps = %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, _, err := readInitialize([]byte(`{"capabilities":[`)); err == nil {
		t.Error("readInitialize of broken JSON: no error")
	}
}
