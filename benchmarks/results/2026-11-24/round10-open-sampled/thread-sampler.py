import os,time,sys,glob
out=open(sys.argv[1],'w')
def procs():
    r=[]
    for p in glob.glob('/proc/[0-9]*/cmdline'):
        try:
            c=open(p,'rb').read()
        except Exception: continue
        if b'load.Worker' in c: r.append((p.split('/')[2], c.split(b'\0')))
    return r
prev={}
while True:
    for pid,cmd in procs():
        client=[x.decode() for x in cmd if x.startswith(b'memroute') or x in (b'folsom',b'raw',b'spymemcached')][:1]
        for t in glob.glob(f'/proc/{pid}/task/*'):
            try:
                name=open(t+'/comm').read().strip()
                st=open(t+'/status').read()
                v=int(st.split('voluntary_ctxt_switches:')[1].split()[0]); nv=int(st.split('nonvoluntary_ctxt_switches:')[1].split()[0])
                ss=open(t+'/schedstat').read().split()
                run,wait,slices=int(ss[0]),int(ss[1]),int(ss[2])
            except Exception: continue
            key=(pid,t)
            if key in prev:
                pv=prev[key]
                dv,dnv,drun,dwait=v-pv[0],nv-pv[1],run-pv[2],wait-pv[3]
                if dv+dnv>1000:
                    out.write(f"{time.time():.1f} {pid} {client} {name:16s} vol {dv:7d} invol {dnv:6d} run_ms {drun/1e6:7.1f} wait_ms {dwait/1e6:7.1f}\n"); out.flush()
            prev[key]=(v,nv,run,wait)
    time.sleep(1)
