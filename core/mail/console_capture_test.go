package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestConsole(t *testing.T) {
	var b bytes.Buffer
	c := NewConsole(&b)
	m := Message{
		To:      "ada@example.com",
		Subject: "Verify your email address",
		Text:    "Open https://x.example/v/t\n\n",
		HTML:    "<p>Open</p>",
		Kind:    KindVerifyEmail,
		Link:    "https://x.example/v/t",
	}
	if err := c.Send(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	m.HTML, m.Kind = "", ""
	if err := c.Send(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	want := `===== mail: verify_email =====
To: ada@example.com
Subject: Verify your email address

--- text/plain ---
Open https://x.example/v/t
--- text/html ---
<p>Open</p>
===== end of mail =====
===== mail: message =====
To: ada@example.com
Subject: Verify your email address

--- text/plain ---
Open https://x.example/v/t
===== end of mail =====
`
	if b.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestConsoleRejects(t *testing.T) {
	var b bytes.Buffer
	c := NewConsole(&b)
	bad := Message{To: "ada@example.com", Subject: "x\r\nBcc: eve@evil.example", Text: "t"}
	if err := c.Send(t.Context(), bad); !errors.Is(err, ErrInvalidHeader) {
		t.Errorf("Send = %v, want ErrInvalidHeader", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Send(ctx, Message{To: "ada@example.com", Subject: "s", Text: "t"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Send = %v, want context.Canceled", err)
	}
	if b.Len() != 0 {
		t.Errorf("wrote %q", b.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestConsoleWriteError(t *testing.T) {
	err := NewConsole(failWriter{}).Send(t.Context(), Message{To: "ada@example.com", Subject: "s", Text: "t"})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Send = %v", err)
	}
}

// Concurrent messages come out whole, one after the other.
func TestConsoleConcurrent(t *testing.T) {
	var b bytes.Buffer
	c := NewConsole(&b)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			m := Message{To: "ada@example.com", Subject: fmt.Sprint(i), Text: strings.Repeat(fmt.Sprintf("line %d\n", i), 50)}
			if err := c.Send(context.Background(), m); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	blocks := strings.SplitAfter(b.String(), "===== end of mail =====\n")
	if len(blocks) != 21 || blocks[20] != "" {
		t.Fatalf("%d blocks", len(blocks))
	}
	for _, blk := range blocks[:20] {
		_, sub, _ := strings.Cut(blk, "Subject: ")
		sub, _, _ = strings.Cut(sub, "\n")
		if strings.Count(blk, "line "+sub+"\n") != 50 || strings.Count(blk, "line ") != 50 {
			t.Errorf("block for %s is mixed:\n%s", sub, blk)
		}
	}
}

func TestCapture(t *testing.T) {
	var c Capture
	if _, ok := c.Last(); ok {
		t.Error("Last on empty Capture reported a message")
	}
	send := func(to, subject string) error {
		return c.Send(t.Context(), Message{To: to, Subject: subject, Text: "t", Kind: KindVerifyEmail})
	}
	for _, m := range [][2]string{{"ada@example.com", "1"}, {"bob@example.com", "2"}, {"ADA@Example.com", "3"}} {
		if err := send(m[0], m[1]); err != nil {
			t.Fatal(err)
		}
	}
	if got := subjects(c.To("<Ada@example.COM>")); !slices.Equal(got, []string{"1", "3"}) {
		t.Errorf("To(ada) = %q", got)
	}
	if got := c.To("nobody@example.com"); got != nil {
		t.Errorf("To(nobody) = %v", got)
	}
	if last, ok := c.Last(); !ok || last.Subject != "3" {
		t.Errorf("Last = %+v, %v", last, ok)
	}
	msgs := c.Messages()
	msgs[0].Subject = "changed"
	if c.Messages()[0].Subject != "1" {
		t.Error("Messages does not return a copy")
	}

	// Refusals are not recorded but count as attempts.
	if err := send("ada@example.com\nBcc: x@y", "4"); !errors.Is(err, ErrInvalidHeader) {
		t.Errorf("invalid: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Send(ctx, Message{To: "ada@example.com", Subject: "5", Text: "t"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	boom := errors.New("boom")
	c.FailNext(2, boom)
	for range 2 {
		if err := send("ada@example.com", "failed"); err != boom {
			t.Errorf("FailNext: %v", err)
		}
	}
	if err := send("ada@example.com", "6"); err != nil {
		t.Errorf("after FailNext: %v", err)
	}
	c.SetFail(boom)
	for range 3 {
		if err := send("ada@example.com", "failed"); err != boom {
			t.Errorf("SetFail: %v", err)
		}
	}
	c.SetFail(nil)
	if err := send("ada@example.com", "7"); err != nil {
		t.Errorf("after SetFail(nil): %v", err)
	}
	if got := subjects(c.Messages()); !slices.Equal(got, []string{"1", "2", "3", "6", "7"}) {
		t.Errorf("Messages = %q", got)
	}
	if c.Len() != 5 || c.Attempts() != 12 {
		t.Errorf("Len=%d Attempts=%d, want 5 and 12", c.Len(), c.Attempts())
	}

	c.SetFail(boom)
	c.Reset()
	if c.Len() != 0 || c.Attempts() != 0 || c.Messages() != nil {
		t.Errorf("after Reset: Len=%d Attempts=%d", c.Len(), c.Attempts())
	}
	if err := send("ada@example.com", "8"); err != nil {
		t.Errorf("Reset kept the failure: %v", err)
	}
}

func TestCaptureConcurrent(t *testing.T) {
	var c Capture
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			for j := range 20 {
				_ = c.Send(context.Background(), Message{To: "ada@example.com", Subject: fmt.Sprint(i, j), Text: "t"})
				_ = c.Messages()
				_, _ = c.Last()
			}
		})
	}
	wg.Wait()
	if c.Len() != 200 {
		t.Errorf("Len = %d", c.Len())
	}
}
