package sandbox

import "syscall"

func pdeathsig() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

func closeFD(fd int) { syscall.Close(fd) }
